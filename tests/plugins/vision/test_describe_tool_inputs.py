"""vision.describe on bad input: each a clear error result the model can act on, nothing sent."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.plugins.vision.image_file import sniff_mime
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.plugins.vision.vision_kit import JPEG_BYTES, WEBP_BYTES, llama, png_bytes, vision_runtime, workspace


def chat_bodies(fake: FakeLlamaServer) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests if r.path == "/v1/chat/completions"]


async def call(tmp_path: Path, fake: FakeLlamaServer, args: dict[str, Any], ws: Path | None = None,
               vision: dict | None = None) -> Any:
    ws = ws or workspace(tmp_path)
    rt = await vision_runtime(tmp_path, llama(fake.base_url), vision)
    try:
        spec = rt.registry.get("vision.describe")
        return await spec.run(args, make_tool_context(ws, state_dir=tmp_path / "state"))
    finally:
        await rt.close()


async def test_a_text_file_named_png_is_not_an_image(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "notes.png").write_text("just some text, not pixels\n")
    with FakeLlamaServer(vision=True) as fake:
        result = await call(tmp_path, fake, {"prompt": "What is it?", "path": "notes.png"}, ws)
    assert result.status == "error" and "notes.png is not an image" in result.summary
    assert "PNG, JPEG, GIF or WebP" in result.summary and not chat_bodies(fake)


async def test_the_type_comes_from_the_bytes_not_the_name(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    (ws / "photo.dat").write_bytes(JPEG_BYTES)
    with FakeLlamaServer(vision=True) as fake:
        result = await call(tmp_path, fake, {"prompt": "What is it?", "paths": ["photo.dat", "shot.png"]}, ws)
    assert result.status == "ok", result.summary
    assert f"[image/jpeg {len(JPEG_BYTES)} bytes] [image/png {len(png_bytes())} bytes]" in result.summary
    assert result.details["images"][0] == {"path": "photo.dat", "mime": "image/jpeg", "bytes": len(JPEG_BYTES)}


def test_the_sniff_knows_the_four_formats_and_nothing_else() -> None:
    assert [sniff_mime(b) for b in (png_bytes(), JPEG_BYTES, b"GIF89a\x01\x00", WEBP_BYTES)] == \
        ["image/png", "image/jpeg", "image/gif", "image/webp"]
    assert sniff_mime(b"RIFF\x00\x00\x00\x00WAVEfmt ") is None and sniff_mime(b"%PDF-1.7") is None


async def test_a_50_mb_image_is_refused_before_it_is_read(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    big = ws / "huge.png"
    with big.open("wb") as handle:  # sparse: 50 MB on paper, a PNG header in front
        handle.write(png_bytes())
        handle.truncate(50 * 1024 * 1024)
    with FakeLlamaServer(vision=True) as fake:
        result = await call(tmp_path, fake, {"prompt": "What?", "path": "huge.png"}, ws)
    assert result.status == "error" and "52,428,800 bytes" in result.summary
    assert "10,485,760" in result.summary and "vision.maxImageBytes" in result.summary and not chat_bodies(fake)


async def test_a_symlink_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    outside = tmp_path / "elsewhere" / "secret.png"
    outside.parent.mkdir()
    outside.write_bytes(png_bytes())
    os.symlink(outside, ws / "innocent.png")
    os.symlink(outside.parent, ws / "linked_dir")
    with FakeLlamaServer(vision=True) as fake:
        leaf = await call(tmp_path, fake, {"prompt": "What?", "path": "innocent.png"}, ws)
        via_dir = await call(tmp_path, fake, {"prompt": "What?", "path": "linked_dir/secret.png"}, ws)
        direct = await call(tmp_path, fake, {"prompt": "What?", "path": str(outside)}, ws)
        dotdot = await call(tmp_path, fake, {"prompt": "What?", "path": "../elsewhere/secret.png"}, ws)
    for result in (leaf, via_dir):
        assert result.status == "error" and "symlink" in result.summary and "out of the workspace" in result.summary
    for result in (direct, dotdot):
        assert result.status == "error" and "outside the workspace" in result.summary
    assert not chat_bodies(fake)


async def test_the_runtime_secrets_stay_refused_inside_the_workspace(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    (state / ".env").write_text("KEY=1\n")
    os.link(state / ".env", ws / "env.png")  # a hard link to the .env planted in the workspace
    with FakeLlamaServer(vision=True) as fake:
        result = await call(tmp_path, fake, {"prompt": "What?", "path": "env.png"}, ws)
    assert result.status == "error" and "secrets" in result.summary and not chat_bodies(fake)


async def test_a_provider_without_vision_gets_a_clear_error(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLlamaServer(vision=False) as fake:
        result = await call(tmp_path, fake, {"prompt": "What?", "path": "shot.png"}, ws)
    assert result.status == "error" and result.details["errorType"] == "vision_unsupported"
    assert "--mmproj" in result.summary and "Answer without looking" in result.summary and not chat_bodies(fake)
    # a provider without the capability at all (the scripted one): the same kind of answer
    rt = await vision_runtime(tmp_path / "scripted", ScriptedProvider([]))
    try:
        answer = await rt.registry.get("vision.describe").run({"prompt": "What?", "path": "shot.png"},
                                                              make_tool_context(ws))
    finally:
        await rt.close()
    assert answer.status == "error" and "cannot look at images" in answer.summary


async def test_auto_detect_off_trusts_the_operator(tmp_path: Path) -> None:
    with FakeLlamaServer(props={"total_slots": 1}, vision=True) as fake:  # /props says nothing about vision
        result = await call(tmp_path, fake, {"prompt": "What?", "path": "shot.png"}, vision={"autoDetect": False})
    assert result.status == "ok" and len(chat_bodies(fake)) == 1


@pytest.mark.parametrize(("args", "said"), [
    ({"path": "shot.png"}, "prompt must say"),
    ({"prompt": "  ", "path": "shot.png"}, "prompt must say"),
    ({"prompt": "What?"}, "pass path"),
    ({"prompt": "What?", "path": "shot.png", "paths": ["shot.png"]}, "not both"),
    ({"prompt": "What?", "paths": []}, "non-empty list"),
    ({"prompt": "What?", "paths": ["shot.png"] * 5}, "at most 4 (vision.maxImagesPerCall)"),
    ({"prompt": "What?", "path": "missing.png"}, "no such file"),
    ({"prompt": "What?", "path": "."}, "directory"),
])
async def test_malformed_calls_say_what_to_change(tmp_path: Path, args: dict[str, Any], said: str) -> None:
    with FakeLlamaServer(vision=True) as fake:
        result = await call(tmp_path, fake, args)
    assert result.status == "error" and said in result.summary and not chat_bodies(fake)
