"""A real SDK server over streamable HTTP on a loopback port."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import make_tool_context
from tests.plugins.mcp.mcp_kit import http_demo_server, http_server, mcp_runtime


async def test_streamable_http_server_on_loopback_serves_tools_resources_and_prompts(tmp_path: Path) -> None:
    with http_demo_server() as url:
        runtime = await mcp_runtime(tmp_path / "state", [http_server("web", url, trust="pure_read")])
        try:
            status = runtime.service("mcp").status("web")
            assert status.status == "up" and status.transport == "streamable_http" and status.resources == 1
            ctx = make_tool_context(tmp_path)
            assert (await runtime.registry.get("mcp.web.add").run({"a": 20, "b": 22}, ctx)).summary == "42"
            read = await runtime.registry.get("mcp.resource.read").run({"server": "web", "uri": "memo://readme"}, ctx)
            assert read.summary == "the memo text"
        finally:
            await runtime.close()


async def test_http_server_that_is_not_listening_is_down_with_the_reason(tmp_path: Path) -> None:
    from tests.plugins.mcp.mcp_kit import free_port

    url = f"http://127.0.0.1:{free_port()}/mcp"
    runtime = await mcp_runtime(tmp_path / "state", [http_server("gone", url, connectTimeoutS=5)])
    try:
        status = runtime.service("mcp").status("gone")
        assert status.status == "down" and status.last_error
    finally:
        await runtime.close()


async def test_an_http_server_that_restarted_gets_a_new_session_and_its_status_says_so(tmp_path: Path) -> None:
    """The server restarts while we are connected; it no longer knows our session id. The next
    call is refused as not run (never a silent "Session not found" for ever while status says
    up), the server shows down, and the reconnect starts a new session that serves calls."""
    import asyncio

    from tests.plugins.mcp.mcp_kit import free_port

    port = free_port()
    state = tmp_path / "state"
    ctx = make_tool_context(tmp_path)
    with http_demo_server(port=port) as url:
        runtime = await mcp_runtime(state, [http_server("web", url, trust="pure_read")])
    try:
        manager = runtime.service("mcp")
        manager.reconnect_base_s = 0.2
        with http_demo_server(port=port):  # the same URL, a new process: our session id means nothing to it
            outcomes = []
            for _ in range(100):
                result = await runtime.registry.get("mcp.web.add").run({"a": 1, "b": 2}, ctx) \
                    if runtime.registry.get("mcp.web.add") is not None else None
                outcomes.append(None if result is None else (result.status, result.summary))
                if result is not None and result.status == "ok" and manager.status("web").status == "up":
                    break
                await asyncio.sleep(0.1)
            assert outcomes[-1] == ("ok", "3"), outcomes[-5:]
            assert manager.status("web").status == "up"
    finally:
        await runtime.close()
