"""An MCP tool called by a real turn against the real llama-server (through `run` and through
the `serve` process), and a server's sampling request answered on slot -1 without disturbing
the session's cached prompt."""

from __future__ import annotations

import json
import signal
import subprocess
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
           "ATOMIC_AGENT_MEMORY_REFLECTION": "0", "ATOMIC_AGENT_MEMORY_REWRITER": "0"}
    # reflection and the query rewriter ride their own slot; only main and sampling here
    runtime = await create_runtime(boot_context=boot(state, environ=dict(env)), environ=env)
    sent: list[dict] = []
    client = runtime.provider.primary.client
    original = client.complete

    async def recording(request, on_delta=None):
        completion = await original(request, on_delta)
        sent.append({"main": "### conversation" in request.prompt, "slot": request.slot_id,
                     "cache": request.cache_prompt, "cache_n": completion.cache_n})
        return completion

    client.complete = recording
    try:
        # the demo's request, which the starter model finishes (a greeting is a coin toss for it,
        # and this test is about the sampling call's slot, not the model's manners)
        first = await runtime.run_turn("list the files in this folder", working_dir=tmp_path)
        sampled = await runtime.registry.get("mcp.demo.ask_model").run({"question": "Name a colour."},
                                                                       make_tool_context(tmp_path))
        second = await runtime.run_turn("list the files in this folder", session_id=first.session_id)
    finally:
        await runtime.close()
    assert first.status == "done" and second.status == "done", (first, second)
    assert sampled.status == "ok" and sampled.summary.startswith("model: "), sampled
    sampling = [s for s in sent if not s["main"]]
    assert sampling and all(s["slot"] == -1 and s["cache"] is False for s in sampling)
    main = [s for s in sent if s["main"]]
    main_slots = {s["slot"] for s in main}
    assert len(main_slots) == 1 and main_slots.pop() >= 0
    last_sampling = max(i for i, s in enumerate(sent) if not s["main"])
    after_sampling = next(s for s in sent[last_sampling + 1:] if s["main"])
    assert after_sampling["cache_n"] > 0  # the session's cached prompt was reused after the sampling call


def test_serve_calls_a_real_mcp_tool_end_to_end_and_adds_a_server_live(llama_server, tmp_path: Path) -> None:
    """The real `atomic-agent serve` process, the real llama-server, real MCP servers: the
    official openai client forces a configured server's tool with `tool_choice`; then the
    operator adds another server over HTTP and the next turn calls its tool, no restart."""
    import httpx
    import openai

    from tests.plugins.serve.test_serve_subprocess import ATOMIC_AGENT, WAIT_S, child_env, free_port, wait_until_up

    state, marker, live_marker = tmp_path / "state", tmp_path / "contacted.txt", tmp_path / "live-contacted.txt"
    _config(state, marker, ["ping"])
    raw = json.loads((state / "config.json").read_text())
    raw["plugins"] = {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}
    (state / "config.json").write_text(json.dumps(raw))
    port = free_port()
    env = child_env(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "3",
                               "ATOMIC_AGENT_SEED": "7", "HOME": str(tmp_path)})
    stderr = (tmp_path / "serve.stderr").open("wb")
    proc = subprocess.Popen([str(ATOMIC_AGENT), "--state-dir", str(state), "serve", "--port", str(port),
                             "--cwd", str(tmp_path)], env=env, stdout=subprocess.DEVNULL, stderr=stderr)
    base = f"http://127.0.0.1:{port}"
    auth: dict[str, str] = {}  # serve generates its API key on the first start

    def tool_entries(session_id: str, tool: str) -> list[dict]:
        entries = httpx.get(f"{base}/api/sessions/{session_id}", timeout=WAIT_S, headers=auth).json()["entries"]
        return [e for e in entries if e["tool"] == tool and e["status"] is not None]

    try:
        wait_until_up(base, proc)
        key = (state / "serve" / "api-key").read_text().strip()
        auth["Authorization"] = f"Bearer {key}"
        api = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=900)
        first = api.chat.completions.with_raw_response.create(
            model="atomic-agent", messages=[{"role": "user", "content": "ping the demo server"}],
            tool_choice={"type": "function", "function": {"name": "mcp.demo.ping"}})
        assert first.parse().choices[0].message.content is not None
        assert marker.read_text().splitlines()[0] == "ping"  # the real MCP server was contacted
        pinged = tool_entries(first.headers["x-atomic-session"], "mcp.demo.ping")
        assert pinged and pinged[0]["status"] == "ok", pinged

        token = (state / "serve" / "operator-token").read_text().strip()
        definition = {"mcpServers": {"live": {"command": sys.executable, "args": [str(DEMO_SERVER)],
                                              "env": {"DEMO_MARKER_FILE": str(live_marker)}}}}
        added = httpx.post(f"{base}/api/mcp/servers", json=definition, timeout=WAIT_S,
                           headers={"X-Atomic-Operator": token, **auth})
        assert added.status_code == 201 and added.json()["data"][0]["status"] == "up", added.text
        second = api.chat.completions.with_raw_response.create(
            model="atomic-agent", messages=[{"role": "user", "content": "ping the live server"}],
            tool_choice={"type": "function", "function": {"name": "mcp.live.ping"}})
        assert second.status_code == 200
        assert live_marker.read_text().splitlines()[0] == "ping"
        assert tool_entries(second.headers["x-atomic-session"], "mcp.live.ping")[0]["status"] == "ok"
        servers = {s["name"]: s for s in httpx.get(f"{base}/api/mcp/servers", timeout=WAIT_S, headers=auth).json()["data"]}
        assert servers["demo"]["status"] == servers["live"]["status"] == "up"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=WAIT_S) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=WAIT_S)
        stderr.close()
