"""Bad input from servers and config: each becomes a clear status or error result, and
the other servers and the session carry on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.mcp.pasted_config import PastedConfigError, parse_pasted_servers
from tests.plugins.mcp.mcp_kit import mcp_runtime, stdio_server

RAW_SERVER = Path(__file__).with_name("raw_server.py")


async def test_server_crashing_mid_call_is_an_error_result_and_the_server_goes_down(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("fragile", trust="pure_read", reconnectAttempts=0),
                                                     stdio_server("steady", trust="pure_read")])
    try:
        ctx = make_tool_context(tmp_path)
        crashed = await runtime.registry.get("mcp.fragile.crash").run({}, ctx)
        assert crashed.status == "error" and "mcp.fragile.crash failed" in crashed.summary
        manager = runtime.service("mcp")
        for _ in range(200):  # the watcher marks it down once the transport has unwound
            if manager.status("fragile").status == "down":
                break
            await asyncio.sleep(0.05)
        status = manager.status("fragile")
        assert status.status == "down" and "process exited" in status.last_error
        after = await runtime.registry.get("mcp.fragile.echo").run({"text": "x"}, ctx)
        assert after.status == "error" and "server 'fragile' is down" in after.summary
        steady = await runtime.registry.get("mcp.steady.echo").run({"text": "fine"}, ctx)
        assert steady.summary == "echo: fine"
    finally:
        await runtime.close()


async def wait_for_status(manager, name: str, wanted: str) -> None:
    for _ in range(400):
        if manager.status(name).status == wanted:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} never became {wanted}: {manager.status(name)}")


async def test_a_crashed_server_is_reconnected_and_its_tools_work_again(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("fragile", trust="pure_read")])
    manager = runtime.service("mcp")
    manager.reconnect_base_s = 0.2
    events: list[tuple[str, dict]] = []
    manager.subscribe(lambda kind, fields: events.append((kind, fields)))
    try:
        ctx = make_tool_context(tmp_path)
        crashed = await runtime.registry.get("mcp.fragile.crash").run({}, ctx)
        assert crashed.status == "error"
        await wait_for_status(manager, "fragile", "down")
        await wait_for_status(manager, "fragile", "up")
        again = await runtime.registry.get("mcp.fragile.echo").run({"text": "back"}, ctx)
        assert again.summary == "echo: back"
        kinds = [kind for kind, _ in events]
        assert kinds[-2:] == ["mcp_server_down", "mcp_server_up"] or kinds[-1] == "mcp_server_up"
        (down,) = [fields for kind, fields in events if kind == "mcp_server_down"]
        assert down["retryInS"] == 0.2 and "process exited" in down["lastError"]
    finally:
        await runtime.close()


async def test_reconnect_off_leaves_the_server_down_until_refresh_reconnects_it(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("fragile", trust="pure_read", reconnectAttempts=0)])
    manager = runtime.service("mcp")
    manager.reconnect_base_s = 0.05
    try:
        ctx = make_tool_context(tmp_path)
        await runtime.registry.get("mcp.fragile.crash").run({}, ctx)
        await wait_for_status(manager, "fragile", "down")
        await asyncio.sleep(0.5)
        assert manager.status("fragile").status == "down"
        assert (await manager.refresh("fragile")).status == "up"
        again = await runtime.registry.get("mcp.fragile.echo").run({"text": "back"}, ctx)
        assert again.summary == "echo: back"
    finally:
        await runtime.close()


async def test_invalid_duplicate_and_schema_broken_tools_are_dropped_and_reported(tmp_path: Path) -> None:
    raw = stdio_server("raw", script=RAW_SERVER, trust="pure_read")
    runtime = await mcp_runtime(tmp_path / "state", [raw])
    try:
        status = runtime.service("mcp").status("raw")
        assert status.status == "up" and status.tools == ("mcp.raw.good", "mcp.raw.malformed")
        assert len(status.dropped) == 3
        assert any("listed twice" in d for d in status.dropped)
        assert any("invalid tool name 'has space'" in d for d in status.dropped)
        assert any("bad_schema" in d and "input schema is invalid" in d for d in status.dropped)
        result = await runtime.registry.get("mcp.raw.good").run({}, make_tool_context(tmp_path))
        assert result.summary == "good answer" and result.details["mcpServer"] == "raw"
    finally:
        await runtime.close()


async def test_a_listing_that_breaks_the_protocol_leaves_that_server_down_with_the_reason(tmp_path: Path) -> None:
    broken = stdio_server("broken", script=RAW_SERVER, env={"RAW_LISTING_BROKEN": "1"})
    runtime = await mcp_runtime(tmp_path / "state", [broken, stdio_server("fine")])
    try:
        status = runtime.service("mcp").status("broken")
        assert status.status == "down" and "tools/list on 'broken' failed" in status.last_error
        assert runtime.service("mcp").status("fine").status == "up"
    finally:
        await runtime.close()


async def test_malformed_result_is_an_error_result_and_the_connection_survives(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("raw", script=RAW_SERVER, trust="pure_read")])
    try:
        ctx = make_tool_context(tmp_path)
        bad = await runtime.registry.get("mcp.raw.malformed").run({}, ctx)
        assert bad.status == "error" and "tools/call malformed on 'raw' failed" in bad.summary
        assert (await runtime.registry.get("mcp.raw.good").run({}, ctx)).summary == "good answer"
    finally:
        await runtime.close()


async def test_huge_results_are_capped(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo")], maxResultChars=5000)
    try:
        result = await runtime.registry.get("mcp.demo.huge").run({"chars": 200_000}, make_tool_context(tmp_path))
        assert result.status == "ok" and result.details["truncated"] is True
        assert len(result.summary) < 5100 and result.summary.endswith("[195000 more characters cut]")
        assert "structured" in result.details and "omitted" in result.details["structured"]
    finally:
        await runtime.close()


async def test_call_timeout_is_an_error_result(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo", callTimeoutS=1)])
    try:
        result = await runtime.registry.get("mcp.demo.slow").run({"seconds": 5}, make_tool_context(tmp_path))
        assert result.status == "error" and "no answer within 1 s" in result.summary
        assert (await runtime.registry.get("mcp.demo.add").run({"a": 1, "b": 1}, make_tool_context(tmp_path))).summary == "2"
    finally:
        await runtime.close()


async def test_duplicate_and_invalid_server_names_in_config_are_invalid_and_the_rest_run(tmp_path: Path) -> None:
    servers = [stdio_server("twin"), stdio_server("twin", trust="pure_read"), stdio_server("Bad_Name"),
               stdio_server("resource"), stdio_server("ok")]
    runtime = await mcp_runtime(tmp_path / "state", servers)
    try:
        statuses = runtime.service("mcp").statuses()
        summary = [(s.name, s.status) for s in statuses]
        assert summary == [("Bad_Name", "invalid"), ("ok", "up"), ("resource", "invalid"), ("twin", "up"),
                           ("twin", "invalid")]
        twin_dup = statuses[-1]
        assert "duplicate server name 'twin' in mcp.servers[1]" in twin_dup.last_error
        assert "kebab-case" in statuses[0].last_error and "reserved" in statuses[2].last_error
        assert runtime.registry.get("mcp.twin.echo").approval_category is None  # the first entry (gated, hint) wins
    finally:
        await runtime.close()


async def test_private_network_url_is_refused_unless_allowed_and_loopback_is_allowed(tmp_path: Path) -> None:
    from atomic_agent.plugins.mcp.url_policy import UrlRefused, check_server_url

    await check_server_url("http://127.0.0.1:9/mcp", allow_private=False)
    with pytest.raises(UrlRefused, match="private"):
        await check_server_url("http://10.1.2.3/mcp", allow_private=False)
    await check_server_url("http://10.1.2.3/mcp", allow_private=True)
    with pytest.raises(UrlRefused, match="metadata"):
        await check_server_url("http://169.254.169.254/mcp", allow_private=True)


@pytest.mark.parametrize(("text", "message"), [
    ("{", "not valid JSON"),
    ("[]", "expected a JSON object"),
    ('{"mcpServers": {"x": {"command": "a"}, "Bad Name": {"command": "b"}}}', "kebab-case"),
    ('{"command": "npx"}', "has no name"),
    ('{"mcpServers": {"x": {"url": "ftp://host/mcp"}}}', "must start with http"),
    ('{"mcpServers": {"x": {"type": "carrier-pigeon", "url": "http://a"}}}', "unknown transport type"),
    ('{"mcpServers": {"x": {"command": "a", "args": "not-a-list"}}}', "args must be a list"),
    ('{"hello": 1}', "no MCP server found"),
])
def test_pasted_config_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(PastedConfigError, match=message):
        parse_pasted_servers(text)


def test_pasted_shapes_from_other_clients_are_understood() -> None:
    claude = parse_pasted_servers(json.dumps({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
                  "env": {"DEBUG": "1"}},
        "remote": {"url": "http://127.0.0.1:3000/mcp", "headers": {"Authorization": "Bearer x"}},
        "legacy": {"type": "sse", "url": "http://127.0.0.1:3001/sse"},
        "windsurf": {"serverUrl": "http://127.0.0.1:3002/mcp", "disabled": True}}}))
    kinds = {s.name: (s.transport.kind, s.enabled) for s in claude}
    assert kinds == {"files": ("stdio", True), "remote": ("streamable_http", True), "legacy": ("sse", True),
                     "windsurf": ("streamable_http", False)}
    assert claude[0].transport.env == {"DEBUG": "1"} and claude[1].transport.headers == {"Authorization": "Bearer x"}
    own = parse_pasted_servers(json.dumps({"name": "mine", "transport": {"kind": "stdio", "command": "srv"},
                                           "trust": "pure_read", "include": ["read_*"]}))[0]
    assert own.trust == "pure_read" and own.admits_tool("read_file") and not own.admits_tool("write_file")
    lone = parse_pasted_servers('{"command": "srv", "args": ["--x"]}', name="lone")[0]
    assert lone.name == "lone" and lone.transport.args == ("--x",)
