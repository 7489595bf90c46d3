"""`atomic-agent run` end to end with the fs tools: the real CLI, runtime, llama-server client and
prompt, with the model's answers scripted by the loopback FakeLlamaServer (the tiny real model
cannot be relied on to call a given tool). The gated write is answered on stdin."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import run_cli
from tests.plugins.tools_cli.plugin_entry_points import plugin_env


def _call(*pairs) -> str:
    return json.dumps([{"tool": t, "args": a} for t, a in pairs])


@pytest.fixture
def world(tmp_path: Path):
    home = tmp_path.resolve() / "home"
    ws, state = home / "ws", home / ".state"
    ws.mkdir(parents=True)
    state.mkdir()
    return home, ws, state, tmp_path / "site"


def _run(world, fake, message: str, *extra: str, input_text: str | None = None):
    home, ws, state, site = world
    env = plugin_env(site, {"HOME": str(home), "ATOMIC_AGENT_LLAMA_URL": fake.base_url})
    return run_cli(["--state-dir", str(state), "run", message, "--cwd", str(ws), *extra], env=env,
                   input_text=input_text, timeout=120)


def test_run_executes_a_read_only_batch(world) -> None:
    _, ws, _, _ = world
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    script = [_call(("os.fs.read", {"path": "a.txt"}), ("os.fs.read", {"path": "b.txt"})),
              _call(("reply", {"text": "both read"}))]
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        result = _run(world, fake, "read a and b", "--json", input_text="")
        prompts = [b["prompt"] for b in fake.completion_bodies]
    assert result.returncode == 0, result.stderr[-2000:]
    events = [json.loads(line) for line in result.stdout.splitlines()]
    done = [e for e in events if e["type"] == "tool_call_result"]
    assert [(e["tool"], e["status"], e.get("batchSize")) for e in done] == [("os.fs.read", "ok", 2)] * 2
    assert "alpha" in prompts[1] and "beta" in prompts[1]


def test_run_gated_write_answered_on_stdin(world) -> None:
    _, ws, _, _ = world
    script = [_call(("os.fs.write", {"path": "out.txt", "content": "written\n"})), _call(("reply", {"text": "ok"}))]
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        result = _run(world, fake, "write out.txt", input_text="y\n")
    assert result.returncode == 0, result.stderr[-2000:]
    assert (ws / "out.txt").read_text() == "written\n"
    assert "approval needed · file write · workspace" in result.stderr and result.stdout.strip() == "ok"
    assert "? approval needed:" not in result.stderr  # shown once, by the sanitising prompt


def test_run_gated_write_denied_on_stdin(world) -> None:
    _, ws, _, _ = world
    script = [_call(("os.fs.write", {"path": "out.txt", "content": "x"})), _call(("reply", {"text": "denied"}))]
    with FakeLlamaServer(script=script, n_ctx=16384) as fake:
        result = _run(world, fake, "write out.txt", input_text="n\n")
        second = fake.completion_bodies[1]["prompt"]
    assert result.returncode == 0 and not (ws / "out.txt").exists()
    assert "not approved (fs_write_workspace)" in second
