"""The real npm server `@modelcontextprotocol/server-everything` over stdio."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import ScriptedProvider, make_tool_context
from tests.plugins.mcp.mcp_kit import mcp_runtime


def _entry(binary: Path, **extra) -> dict:
    return {"name": "everything", "transport": {"kind": "stdio", "command": str(binary), "args": ["stdio"]}, **extra}


async def test_npm_everything_server_tools_run_through_the_plugin(tmp_path: Path, everything_server: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [_entry(everything_server)])
    try:
        status = runtime.service("mcp").status("everything")
        assert status.status == "up" and "mcp.everything.get-sum" in status.tools
        ctx = make_tool_context(tmp_path, approve=False)  # read-only hinted tools never ask
        total = await runtime.registry.get("mcp.everything.get-sum").run({"a": 2, "b": 40}, ctx)
        assert total.status == "ok" and "42" in total.summary
        image = await runtime.registry.get("mcp.everything.get-tiny-image").run({}, ctx)
        assert "[image image/png" in image.summary
        gated = await runtime.registry.get("mcp.everything.toggle-simulated-logging").run({}, ctx)
        assert gated.details["approvalDenied"] is True
    finally:
        await runtime.close()


async def test_stdio_server_gets_the_filtered_environment_plus_its_own_env(tmp_path: Path,
                                                                           everything_server: Path) -> None:
    environ = {"PATH": "/usr/local/bin:/usr/bin:/bin", "OPENAI_API_KEY": "sk-agent-secret-123456789"}
    entry = _entry(everything_server)
    entry["transport"]["env"] = {"MCP_GIVEN": "given-value"}
    runtime = await mcp_runtime(tmp_path / "state", [entry], environ=environ)
    try:
        env_dump = await runtime.registry.get("mcp.everything.get-env").run({}, make_tool_context(tmp_path))
        assert "given-value" in env_dump.summary and "sk-agent-secret" not in env_dump.summary
        assert "OPENAI_API_KEY" not in env_dump.summary
    finally:
        await runtime.close()


async def test_npm_server_sampling_request_is_answered_on_slot_minus_one(tmp_path: Path,
                                                                        everything_server: Path) -> None:
    provider = ScriptedProvider(["a sampled answer"], slot=0)
    runtime = await mcp_runtime(tmp_path / "state", [_entry(everything_server, trust="pure_read")], provider=provider)
    try:
        result = await runtime.registry.get("mcp.everything.trigger-sampling-request").run(
            {"prompt": "say something", "maxTokens": 30}, make_tool_context(tmp_path))
        assert result.status == "ok" and "a sampled answer" in result.summary
        assert provider.requests[0].slot_id == -1 and provider.requests[0].cache_prompt is False
    finally:
        await runtime.close()
