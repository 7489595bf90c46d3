"""An MCP tool called by a real turn against the real llama-server, and a server's
sampling request answered on slot -1 without disturbing the session's cached prompt."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from atomic_agent.api import create_runtime, make_tool_context
from atomic_agent.runtime.boot_context import boot
from tests.cli.run_cli import run_cli
from tests.plugins.mcp.mcp_kit import DEMO_SERVER

pytestmark = pytest.mark.llama_server


def _config(state: Path, marker: Path, include: list[str]) -> None:
    state.mkdir(parents=True, exist_ok=True)
    server = {"name": "demo", "transport": {"kind": "stdio", "command": sys.executable, "args": [str(DEMO_SERVER)],
                                            "env": {"DEMO_MARKER_FILE": str(marker)}},
              "include": include}
    (state / "config.json").write_text(json.dumps({"mcp": {"servers": [server]}}))


def test_run_calls_a_real_mcp_tool_end_to_end(llama_server, tmp_path: Path) -> None:
    marker = tmp_path / "contacted.txt"
    _config(tmp_path / "state", marker, ["ping"])
    env = {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "3", "ATOMIC_AGENT_SEED": "7",
           "HOME": str(tmp_path)}
    result = run_cli(["--state-dir", str(tmp_path / "state"), "run", "--cwd", str(tmp_path), "--json",
                      "--tool-choice", "mcp.demo.ping", "ping the demo server"], env=env, timeout=300)
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    results = [e for e in events if e["type"] == "tool_call_result" and e["tool"] == "mcp.demo.ping"]
    assert results and results[0]["status"] == "ok" and results[0]["summary"] == "pong", result.stderr + result.stdout
    assert marker.read_text().splitlines()[0] == "ping"  # the real server was contacted
    assert any(e["type"] == "turn_finished" for e in events)


async def test_sampling_runs_on_slot_minus_one_and_the_main_slot_keeps_its_cache(llama_server, tmp_path: Path) -> None:
    state = tmp_path / "state"
    _config(state, tmp_path / "marker.txt", ["ask_model", "ping"])
    env = {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "4", "ATOMIC_AGENT_SEED": "7",
           "ATOMIC_AGENT_MEMORY_REFLECTION": "0"}  # reflection has its own slot; only main and sampling here
    runtime = await create_runtime(boot_context=boot(state, environ=dict(env)), environ=env)
    sent: list[dict] = []
    client = runtime.provider.client
    original = client.complete

    async def recording(request, on_delta=None):
        completion = await original(request, on_delta)
        sent.append({"main": "### conversation" in request.prompt, "slot": request.slot_id,
                     "cache": request.cache_prompt, "cache_n": completion.cache_n})
        return completion

    client.complete = recording
    try:
        first = await runtime.run_turn("Say hello.", working_dir=tmp_path)
        sampled = await runtime.registry.get("mcp.demo.ask_model").run({"question": "Name a colour."},
                                                                       make_tool_context(tmp_path))
        second = await runtime.run_turn("Say hello again.", session_id=first.session_id)
    finally:
        await runtime.close()
    assert first.status == "done" and second.status == "done"
    assert sampled.status == "ok" and sampled.summary.startswith("model: ")
    sampling = [s for s in sent if not s["main"]]
    assert sampling and all(s["slot"] == -1 and s["cache"] is False for s in sampling)
    main = [s for s in sent if s["main"]]
    main_slots = {s["slot"] for s in main}
    assert len(main_slots) == 1 and main_slots.pop() >= 0
    last_sampling = max(i for i, s in enumerate(sent) if not s["main"])
    after_sampling = next(s for s in sent[last_sampling + 1:] if s["main"])
    assert after_sampling["cache_n"] > 0  # the session's cached prompt was reused after the sampling call
