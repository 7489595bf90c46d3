"""The seven locked invariants of vision, one test each (docs: plugins/vision/__init__.py and
the guide's "Vision (multimodal input)")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_agent.api import Tier
from atomic_agent.plugins.llama_server.server_process import VISION_BUDGET_ARGS, LaunchSpec
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.vision.vision_kit import llama, png_bytes, vision_runtime, workspace

DESCRIBE = ("vision.describe", {"prompt": "What does the screenshot show?", "path": "shot.png"})
REPLY = calls(("reply", {"text": "It shows a grey square."}))


def chat_bodies(fake: FakeLlamaServer) -> list[dict[str, Any]]:
    return [r.body for r in fake.requests if r.path == "/v1/chat/completions"]


def tool_results(rt: Any, sid: str) -> list[Any]:
    return [e for e in rt.sessions.load(sid).entries if e.kind == "tool_result"]


async def describe_turn(tmp_path: Path, fake: FakeLlamaServer, vision: dict | None = None) -> tuple[Any, Any]:
    ws = workspace(tmp_path)
    provider = llama(fake.base_url)
    rt = await vision_runtime(tmp_path, provider, vision)
    try:
        result = await rt.run_turn("look at shot.png", working_dir=ws)
        return rt, result
    except BaseException:
        await rt.close()
        raise


async def test_invariant_1_vision_calls_never_touch_the_main_or_reflection_slot(tmp_path: Path) -> None:
    with FakeLlamaServer([calls(DESCRIBE), REPLY], vision=True, total_slots=3) as fake:
        rt, result = await describe_turn(tmp_path, fake)
        try:
            provider = llama(fake.base_url)
            await provider.props()
            main, reflection = provider.slot_for(result.session_id), provider.reflection_slot()
            await provider.close()
        finally:
            await rt.close()
    assert result.status == "done", result
    [body] = chat_bodies(fake)
    assert "id_slot" not in body and "slot_id" not in body  # the chat endpoint picks its own slot
    text_slots = {b["id_slot"] for b in fake.completion_bodies}
    assert text_slots and reflection not in text_slots and main >= 0


async def test_invariant_2_vision_lives_outside_the_conversation_transcript(tmp_path: Path) -> None:
    with FakeLlamaServer([calls(DESCRIBE), REPLY], vision=True) as fake:
        rt, result = await describe_turn(tmp_path, fake)
        try:
            [entry] = tool_results(rt, result.session_id)
            stored = json.dumps([e.text for e in rt.sessions.load(result.session_id).entries])
        finally:
            await rt.close()
    assert entry.tool == "vision.describe" and entry.status == "ok"
    assert "a fake description [image/png" in entry.text
    # the description reaches the model as an ordinary tool result; the image bytes never do
    second_prompt = fake.completion_bodies[1]["prompt"]
    assert "a fake description [image/png" in second_prompt
    assert "base64" not in stored and "data:image" not in second_prompt and "data:image" not in stored


async def test_invariant_3_text_completion_bypasses_the_vision_verb(tmp_path: Path) -> None:
    with FakeLlamaServer([calls(DESCRIBE), REPLY], vision=True) as fake:
        rt, result = await describe_turn(tmp_path, fake)
        await rt.close()
    assert result.reply == "It shows a grey square."
    # both steps went through /completion with the grammar and a pinned slot; only the image went to chat
    assert len(fake.completion_bodies) == 2 and len(chat_bodies(fake)) == 1
    assert all("grammar" in b and b["id_slot"] >= 0 and "image_url" not in json.dumps(b) for b in fake.completion_bodies)


async def test_invariant_4_registration_is_config_only_and_capability_is_asked_per_call(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLlamaServer([calls(DESCRIBE), REPLY, calls(DESCRIBE), REPLY], vision=False) as fake:
        rt = await vision_runtime(tmp_path, llama(fake.base_url))
        try:
            assert "vision.describe" in rt.registry.names()  # registered though the model cannot see
            first = await rt.run_turn("look", working_dir=ws)
            fake.vision = True  # the server restarted with --mmproj at the same address
            second = await rt.run_turn("look again", session_id=first.session_id, working_dir=ws)
            denied, described = tool_results(rt, second.session_id)
        finally:
            await rt.close()
    assert denied.status == "error" and "cannot see images" in denied.text
    assert described.status == "ok" and "a fake description" in described.text
    off = await vision_runtime(tmp_path / "off", llama("http://127.0.0.1:9"), {"enabled": False})
    try:
        assert "vision.describe" not in off.registry.names()
    finally:
        await off.close()


async def test_invariant_5_the_grammar_allows_vision_describe_whatever_the_model_can_do(tmp_path: Path) -> None:
    with FakeLlamaServer(vision=False) as fake:
        rt = await vision_runtime(tmp_path, llama(fake.base_url))
        try:
            plan = await rt.prompt_plan()
        finally:
            await rt.close()
    assert plan.grammar is not None and '\\"vision.describe\\"' in plan.grammar
    # vision switched off: the tool is absent, and a call to it is refused by the registry
    # (a failed turn naming the tool), never run
    with FakeLlamaServer([calls(DESCRIBE), REPLY], vision=True) as fake:
        rt, result = await describe_turn(tmp_path / "off", fake, {"enabled": False})
        await rt.close()
    assert (result.status, result.category) == ("failed", "tool")
    assert "unregistered tool(s) vision.describe" in (result.error or "") and not chat_bodies(fake)


def test_invariant_6_the_image_budget_flags_travel_only_with_mmproj(tmp_path: Path) -> None:
    base = LaunchSpec(binary=Path("/bin/llama-server"), model=Path("/m/model.gguf"))
    plain = base.argv()
    assert "--mmproj" not in plain and not {"--image-min-tokens", "--image-max-tokens", "--ubatch-size"} & set(plain)
    with_projector = LaunchSpec(binary=base.binary, model=base.model, mmproj=Path("/m/mmproj.gguf")).argv()
    at = with_projector.index("--mmproj")
    assert with_projector[at:at + 2 + len(VISION_BUDGET_ARGS)] == ["--mmproj", "/m/mmproj.gguf", *VISION_BUDGET_ARGS]
    assert VISION_BUDGET_ARGS == ("--image-min-tokens", "560", "--image-max-tokens", "560", "--ubatch-size", "1024",
                                  "--batch-size", "2048")


async def test_invariant_7_vision_describe_is_frequent_with_its_full_schema_in_the_stable_prefix(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    with FakeLlamaServer(vision=True) as fake:
        rt = await vision_runtime(tmp_path, llama(fake.base_url))
        try:
            spec = rt.registry.get("vision.describe")
            prefix = (await rt.prompt_plan()).stable_prefix_for(ws)
        finally:
            await rt.close()
    assert spec.tier is Tier.FREQUENT
    # the full signature among the frequent tools, above the one-name rare list
    signature = "vision.describe(prompt: string, path?: string, paths?: string[])"
    assert signature in prefix and prefix.index(signature) < prefix.index("# extras (tier rare")


def test_png_helper_is_a_png() -> None:
    assert png_bytes().startswith(b"\x89PNG")
