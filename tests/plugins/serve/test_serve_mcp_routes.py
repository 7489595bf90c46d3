"""serve's /api/mcp/servers routes change the running host's MCP servers live, behind the
operator credential, and MCP status and drift events reach operators on /api/events only.

The servers are real: `demo_server.py` (the SDK's MCPServer) over stdio, connected on the
server's own event loop."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from atomic_agent.api import ScriptedProvider, make_tool_context
from atomic_agent.plugins.mcp.drift_store import DriftStore
from atomic_agent.plugins.mcp.mcp_records import ToolMeta
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.mcp.mcp_kit import DEMO_SERVER, mcp_host, stdio_server, write_config
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness
from tests.plugins.serve.test_serve_events_and_approvals import read_events_until

TOKEN = "operator-token-" + "0" * 48
OPERATOR = {"X-Atomic-Operator": TOKEN}
LIVE = {"mcpServers": {"live": {"command": sys.executable, "args": [str(DEMO_SERVER)]}}}


def mcp_serve(tmp_path: Path, servers: list[dict[str, Any]], script: list[Any] = (), *,
              api_key: str | None = None) -> ServeHarness:
    """serve over a real runtime with the mcp plugin; configured servers connect on serve's loop."""
    state = tmp_path / "state"
    write_config(state, servers)

    def factory(ask: Any) -> Runtime:
        return Runtime(boot(state, environ={}, host=mcp_host()), provider=ScriptedProvider(list(script)), ask=ask,
                       environ={"PATH": "/usr/bin:/bin"})

    serve = ServeHarness(tmp_path, runtime_factory=factory, operator_token=None if api_key else TOKEN,
                         api_key=api_key)
    serve.run_async(serve.runtime.start)
    return serve


def configured(tmp_path: Path) -> list[str]:
    raw = json.loads((tmp_path / "state" / "config.json").read_text())
    return [s["name"] for s in raw["mcp"]["servers"]]


def test_listing_shows_status_tool_counts_and_drift_to_any_caller(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [stdio_server("demo", include=["echo", "ping"])])
    try:
        listed = httpx.get(f"{serve.base_url}/api/mcp/servers", timeout=WAIT_S)
        assert listed.status_code == 200
        (demo,) = listed.json()["data"]
        assert (demo["name"], demo["status"], demo["toolCount"], demo["drifted"]) == ("demo", "up", 2, [])
        assert demo["tools"] == ["mcp.demo.echo", "mcp.demo.ping"]
    finally:
        serve.stop()


def test_adding_a_server_without_the_operator_credential_is_refused_and_writes_nothing(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [])
    try:
        refused = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, timeout=WAIT_S,
                             headers={"X-Atomic-Client": "test-client-0123456789abcdef"})
        assert refused.status_code == 403
        assert refused.json()["error"]["code"] == "operator_required"
        assert "x-atomic-operator" in refused.json()["error"]["message"].lower()
        assert configured(tmp_path) == [] and "mcp.live.echo" not in serve.runtime.registry
        forged = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, timeout=WAIT_S,
                            headers={"X-Atomic-Operator": "not-the-token"})
        assert forged.status_code == 403 and forged.json()["error"]["code"] == "invalid_operator_token"
        assert configured(tmp_path) == []
    finally:
        serve.stop()


def test_operator_adds_a_server_persisted_first_then_connected_and_in_the_next_prompt(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [])
    try:
        added = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, headers=OPERATOR, timeout=WAIT_S)
        assert added.status_code == 201, added.text
        (status,) = added.json()["data"]
        assert (status["name"], status["status"]) == ("live", "up") and "mcp.live.echo" in status["tools"]
        assert configured(tmp_path) == ["live"]
        assert "mcp.live.echo" in serve.runtime.registry
        plan = serve.run_async(serve.runtime.prompt_plan)
        assert "mcp.live.echo" in plan.grammar
        again = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, headers=OPERATOR, timeout=WAIT_S)
        assert again.status_code == 409 and again.json()["error"]["code"] == "mcp_server_exists"
        replaced = httpx.post(f"{serve.base_url}/api/mcp/servers?replace=true", json=LIVE, headers=OPERATOR,
                              timeout=WAIT_S)
        assert replaced.status_code == 201 and replaced.json()["data"][0]["status"] == "up"
        assert configured(tmp_path) == ["live"]
    finally:
        serve.stop()


def test_a_definition_that_is_not_a_server_is_a_400_in_the_error_envelope(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [])
    try:
        for body in ({"nothing": 1}, {"mcpServers": {"Bad Name!": {"command": "x"}}}):
            bad = httpx.post(f"{serve.base_url}/api/mcp/servers", json=body, headers=OPERATOR, timeout=WAIT_S)
            assert bad.status_code == 400, bad.text
            error = bad.json()["error"]
            assert (error["code"], error["type"]) == ("mcp_invalid_server", "invalid_request_error") and error["message"]
        flag = httpx.post(f"{serve.base_url}/api/mcp/servers?replace=maybe", json=LIVE, headers=OPERATOR,
                          timeout=WAIT_S)
        assert flag.status_code == 400 and flag.json()["error"]["code"] == "invalid_value"
        assert configured(tmp_path) == []
    finally:
        serve.stop()


def test_removing_a_server_is_an_operator_action_persisted_then_disconnected(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [stdio_server("demo")])
    try:
        assert "mcp.demo.echo" in serve.runtime.registry
        refused = httpx.delete(f"{serve.base_url}/api/mcp/servers/demo", timeout=WAIT_S)
        assert refused.status_code == 403 and configured(tmp_path) == ["demo"]
        removed = httpx.delete(f"{serve.base_url}/api/mcp/servers/demo", headers=OPERATOR, timeout=WAIT_S)
        assert removed.status_code == 200 and removed.json() == {"name": "demo", "removed": True}
        assert configured(tmp_path) == [] and "mcp.demo.echo" not in serve.runtime.registry
        assert httpx.get(f"{serve.base_url}/api/mcp/servers", timeout=WAIT_S).json()["data"] == []
        missing = httpx.delete(f"{serve.base_url}/api/mcp/servers/demo", headers=OPERATOR, timeout=WAIT_S)
        assert missing.status_code == 404 and missing.json()["error"]["code"] == "mcp_server_not_found"
    finally:
        serve.stop()


def _drifted_demo(tmp_path: Path) -> None:
    """The operator accepted the demo's catalog earlier, with other definitions of echo and add:
    both have drifted since (every other tool is as it was approved)."""
    import asyncio

    from tests.plugins.mcp.mcp_kit import mcp_runtime

    async def accept_catalog() -> None:
        runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo")])  # first sight: all accepted
        await runtime.close()

    asyncio.run(accept_catalog())
    DriftStore.open(tmp_path / "state").approve("demo", [ToolMeta("echo", "Echo (older text).", {"type": "object"}),
                                                         ToolMeta("add", "Add (older text).", {"type": "object"})])


def test_operator_approves_named_drifted_tools_and_an_unknown_name_approves_nothing(tmp_path: Path) -> None:
    _drifted_demo(tmp_path)
    serve = mcp_serve(tmp_path, [stdio_server("demo")])
    try:
        (demo,) = httpx.get(f"{serve.base_url}/api/mcp/servers", timeout=WAIT_S).json()["data"]
        assert demo["drifted"] == ["add", "echo"] and "mcp.demo.echo" not in serve.runtime.registry
        url = f"{serve.base_url}/api/mcp/servers/demo/approve"
        refused = httpx.post(url, json={"tools": ["echo"]}, timeout=WAIT_S)
        assert refused.status_code == 403 and refused.json()["error"]["code"] == "operator_required"
        unknown = httpx.post(url, json={"tools": ["echo", "nope"]}, headers=OPERATOR, timeout=WAIT_S)
        assert unknown.status_code == 400 and unknown.json()["error"]["code"] == "mcp_tool_not_found"
        assert "'nope'" in unknown.json()["error"]["message"]
        assert serve.runtime.service("mcp").status("demo").drifted == ("add", "echo")  # nothing approved
        for bad in ({"tools": []}, {"tools": "echo"}, {"tool": "echo"}):
            invalid = httpx.post(url, json=bad, headers=OPERATOR, timeout=WAIT_S)
            assert invalid.status_code == 400 and invalid.json()["error"]["code"] == "invalid_value"
        approved = httpx.post(url, json={"tools": ["echo"]}, headers=OPERATOR, timeout=WAIT_S)
        assert approved.status_code == 200, approved.text
        assert approved.json()["approved"] == ["echo"] and approved.json()["status"]["drifted"] == ["add"]
        assert "mcp.demo.echo" in serve.runtime.registry and "mcp.demo.add" not in serve.runtime.registry
        rest = httpx.post(url, headers=OPERATOR, timeout=WAIT_S)  # no body: every tool of the server
        assert rest.status_code == 200 and rest.json()["status"]["drifted"] == []
        assert "mcp.demo.add" in serve.runtime.registry
        nowhere = httpx.post(f"{serve.base_url}/api/mcp/servers/ghost/approve", headers=OPERATOR, timeout=WAIT_S)
        assert nowhere.status_code == 404 and nowhere.json()["error"]["code"] == "mcp_server_not_found"
    finally:
        serve.stop()


def test_the_api_key_holder_is_the_operator_for_mcp_changes(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [], api_key="k" * 32)
    try:
        anonymous = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, timeout=WAIT_S)
        assert anonymous.status_code == 401 and configured(tmp_path) == []
        keyed = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, timeout=WAIT_S,
                           headers={"Authorization": f"Bearer {'k' * 32}"})
        assert keyed.status_code == 201 and configured(tmp_path) == ["live"]
    finally:
        serve.stop()


def test_mcp_status_and_drift_events_reach_operators_on_api_events_and_no_one_else(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [], script=[calls(("reply", {"text": "hello"}))])
    try:
        with httpx.stream("GET", f"{serve.base_url}/api/events", headers=OPERATOR, timeout=WAIT_S) as operator_stream, \
                httpx.stream("GET", f"{serve.base_url}/api/events", timeout=WAIT_S) as plain_stream:
            operator, plain = operator_stream.iter_lines(), plain_stream.iter_lines()
            assert httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, headers=OPERATOR,
                              timeout=WAIT_S).status_code == 201
            up, _ = read_events_until(operator, "mcp_server_up")
            assert up["server"] == "live" and "mcp.live.echo" in up["tools"] and up["drifted"] == []
            broken = {"broken": {"command": str(tmp_path / "no-such-server")}}
            down_added = httpx.post(f"{serve.base_url}/api/mcp/servers", json={"mcpServers": broken},
                                    headers=OPERATOR, timeout=WAIT_S)
            assert down_added.status_code == 201 and down_added.json()["data"][0]["status"] == "down"
            down, _ = read_events_until(operator, "mcp_server_down")
            assert down["server"] == "broken" and down["lastError"]
            manager = serve.runtime.service("mcp")
            manager.drift.approve("live", [ToolMeta("echo", "Echo (older text).", {"type": "object"})])
            serve.run_async(lambda: manager.refresh("live"))
            drift, _ = read_events_until(operator, "mcp_tool_drift")
            assert drift == {"type": "mcp_tool_drift", "server": "live", "tools": ["echo"],
                             "advice": "atomic-agent mcp approve live"}
            # a turn's events reach every client; the plain stream saw none of the MCP events before them
            chat = threading.Thread(target=lambda: httpx.post(
                f"{serve.base_url}/v1/chat/completions", json={"messages": [{"role": "user", "content": "hi"}]},
                timeout=WAIT_S))
            chat.start()
            _, seen = read_events_until(plain, "turn_finished")
            chat.join(WAIT_S)
            assert "turn_started" in seen and not [name for name in seen if name.startswith("mcp_")]
    finally:
        serve.stop()


def test_a_server_dying_while_serve_runs_is_announced_down_to_operators(tmp_path: Path) -> None:
    serve = mcp_serve(tmp_path, [stdio_server("fragile")])
    try:
        with httpx.stream("GET", f"{serve.base_url}/api/events", headers=OPERATOR, timeout=WAIT_S) as stream:
            events = stream.iter_lines()
            crash = serve.runtime.registry.get("mcp.fragile.crash")
            crashed = serve.run_async(lambda: crash.run({}, make_tool_context(tmp_path)))
            assert crashed.status == "error"
            down, _ = read_events_until(events, "mcp_server_down")
            assert down["server"] == "fragile" and "process exited" in down["lastError"]
        (fragile,) = httpx.get(f"{serve.base_url}/api/mcp/servers", timeout=WAIT_S).json()["data"]
        assert fragile["status"] == "down" and fragile["lastError"] == down["lastError"]
        approve = httpx.post(f"{serve.base_url}/api/mcp/servers/fragile/approve", headers=OPERATOR, timeout=WAIT_S)
        assert approve.status_code == 409 and approve.json()["error"]["code"] == "mcp_server_unavailable"
        assert "fragile" in approve.json()["error"]["message"]
    finally:
        serve.stop()


def test_mcp_routes_answer_mcp_unavailable_without_the_mcp_plugin(tmp_path: Path) -> None:
    serve = ServeHarness(tmp_path, ScriptedProvider([]), operator_token=TOKEN)
    try:
        listed = httpx.get(f"{serve.base_url}/api/mcp/servers", timeout=WAIT_S)
        assert listed.status_code == 501 and listed.json()["error"]["code"] == "mcp_unavailable"
        added = httpx.post(f"{serve.base_url}/api/mcp/servers", json=LIVE, headers=OPERATOR, timeout=WAIT_S)
        assert added.status_code == 501 and added.json()["error"]["code"] == "mcp_unavailable"
    finally:
        serve.stop()
