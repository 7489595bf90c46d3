"""vision.describe end to end through the real `atomic-agent` process: `run` against the fake
llama-server (scripted text steps on /completion, the image on /v1/chat/completions);
`prompt show`, `tools list` and `models add --mmproj` show and keep it."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from atomic_agent.testing.scripted_provider import calls
from tests.cli.run_cli import run_cli
from tests.plugins.vision.vision_kit import QUIET, png_bytes, workspace


def state_dir(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps(QUIET))
    return state


def env_for(fake: FakeLlamaServer) -> dict[str, str]:
    return {"ATOMIC_AGENT_LLAMA_URL": fake.base_url, "ATOMIC_AGENT_STATE_DIR": ""}


def test_run_describes_an_image_and_answers_from_the_description(tmp_path: Path) -> None:
    ws, state = workspace(tmp_path), state_dir(tmp_path)
    script = [calls(("vision.describe", {"prompt": "What colour is it?", "path": "shot.png"})),
              calls(("reply", {"text": "The image is a small grey square."}))]
    with FakeLlamaServer(script, vision=True) as fake:
        fake.vision_reply = "A uniformly grey square."
        result = run_cli(["--state-dir", str(state), "run", "--cwd", str(ws), "what is in shot.png?"],
                         env=env_for(fake))
    assert result.returncode == 0, result.stderr
    assert "The image is a small grey square." in result.stdout
    [chat] = [r.body for r in fake.requests if r.path == "/v1/chat/completions"]
    assert chat["messages"][0]["content"][-1] == {"type": "text", "text": "What colour is it?"}
    # the second step saw the description as the tool's result
    second = fake.completion_bodies[1]["prompt"]
    assert f"A uniformly grey square. [image/png {len(png_bytes())} bytes]" in second


def test_tools_list_and_prompt_show_offer_the_tool(tmp_path: Path) -> None:
    state = state_dir(tmp_path)
    with FakeLlamaServer(vision=False) as fake:  # offered whatever the model can do (checked per call)
        tools = run_cli(["--state-dir", str(state), "tools", "list", "--json"], env=env_for(fake))
        prompt = run_cli(["--state-dir", str(state), "prompt", "show"], env=env_for(fake))
    assert tools.returncode == 0, tools.stderr
    assert "vision.describe" in tools.stdout
    assert prompt.returncode == 0, prompt.stderr
    assert "vision.describe(prompt: string, path?: string, paths?: string[])" in prompt.stdout


def test_vision_disabled_takes_the_tool_out_of_the_prompt(tmp_path: Path) -> None:
    state = state_dir(tmp_path)
    (state / "config.json").write_text(json.dumps({**QUIET, "vision": {"enabled": False}}))
    with FakeLlamaServer(vision=True) as fake:
        prompt = run_cli(["--state-dir", str(state), "prompt", "show"], env=env_for(fake))
    assert prompt.returncode == 0, prompt.stderr
    assert "vision.describe" not in prompt.stdout


def test_models_add_keeps_a_projector_beside_the_gguf(tmp_path: Path) -> None:
    state = state_dir(tmp_path)
    model, projector = tmp_path / "gemma.gguf", tmp_path / "mmproj-gemma-f16.gguf"
    model.write_bytes(b"GGUF" + b"\x00" * 64)
    projector.write_bytes(b"GGUF" + b"\x01" * 64)
    added = run_cli(["--state-dir", str(state), "models", "add", str(model), "--id", "gemma-vl",
                     "--mmproj", str(projector)])
    assert added.returncode == 0, added.stderr
    assert f"projector: {projector.resolve()}" in added.stdout
    registry = json.loads((state / "llamacpp" / "models.json").read_text())
    [entry] = [m for m in registry["models"] if m["id"] == "gemma-vl"]
    assert entry["mmproj"] == str(projector.resolve())
    not_gguf = tmp_path / "mmproj.txt"
    not_gguf.write_text("text")
    refused = run_cli(["--state-dir", str(state), "models", "add", str(model), "--id", "other",
                       "--mmproj", str(not_gguf)])
    assert refused.returncode != 0 and "is not a GGUF file" in refused.stderr
