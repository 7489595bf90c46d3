"""`atomic-agent run` with the os tools against the REAL llama-server (SmolLM2-135M).

The tiny model will not pick a tool on its own, so the first step is forced with
`--tool-choice` (the grammar then admits only that tool); the model still writes the
arguments itself, copying them from the message. What must hold: the read-only batch runs
in parallel through the real CLI, runtime, gate and server, and the gated write asks on
stdin, names the category label, and writes only after `y`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.run_cli import run_cli

pytestmark = pytest.mark.llama_server


def _run(llama_server, tmp_path: Path, ws: Path, message: str, tool: str, input_text: str):
    env = {"HOME": str(tmp_path), "ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "1"}
    # greedy decoding: the same build and model give the same arguments every run
    set_greedy = run_cli(["--state-dir", str(tmp_path / "state"), "config", "set", "llama.temperature", "0"], env=env)
    assert set_greedy.returncode == 0, set_greedy.stderr
    return run_cli(["--state-dir", str(tmp_path / "state"), "run", message, "--cwd", str(ws), "--json",
                    "--tool-choice", tool], env=env, input_text=input_text, timeout=300)


def _results(stdout: str, step: int = 0) -> list[dict]:
    events = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [e for e in events if e["type"] == "tool_call_result" and e["step"] == step]


def test_real_server_runs_a_read_only_batch_of_fs_reads(llama_server, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha beta\n")
    (ws / "b.txt").write_text("gamma\n")
    message = ('Answer with exactly this array: [{"tool": "os.fs.read", "args": {"path": "a.txt"}}, '
               '{"tool": "os.fs.read", "args": {"path": "b.txt"}}]')
    ran = _run(llama_server, tmp_path, ws, message, "os.fs.read", "")
    assert ran.returncode == 0, ran.stderr[-2000:]
    first = sorted(_results(ran.stdout), key=lambda e: e["batchIndex"])  # events come in completion order
    assert [(e["tool"], e["status"]) for e in first] == [("os.fs.read", "ok")] * 2, ran.stdout[-3000:]
    assert {e.get("batchSize") for e in first} == {2}
    assert "alpha beta" in first[0]["summary"] and "gamma" in first[1]["summary"]


def test_real_server_gated_write_is_answered_on_stdin(llama_server, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    message = 'Use os.fs.write with {"path": "out.txt", "content": "hello"}'
    ran = _run(llama_server, tmp_path, ws, message, "os.fs.write", "y\n")
    first = _results(ran.stdout)
    assert [(e["tool"], e["status"]) for e in first] == [("os.fs.write", "ok")], ran.stdout[-3000:]
    asked = [json.loads(line) for line in ran.stdout.splitlines() if '"approval_request"' in line]
    assert asked and asked[0]["label"] == "file write · workspace"
    assert "approval needed · file write · workspace" in ran.stderr
    assert (ws / "out.txt").read_text() == "hello"


def test_real_server_gated_write_denied_on_stdin_writes_nothing(llama_server, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    message = 'Use os.fs.write with {"path": "out.txt", "content": "hello"}'
    ran = _run(llama_server, tmp_path, ws, message, "os.fs.write", "n\n")
    first = _results(ran.stdout)
    assert [(e["tool"], e["status"]) for e in first] == [("os.fs.write", "error")], ran.stdout[-3000:]
    assert not (ws / "out.txt").exists()
