"""Sampling: a server's `sampling/createMessage` is answered by the session's provider on
slot -1 with cache_prompt false, free-form; caps refuse with a JSON-RPC error and the
transport keeps working."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import ScriptedProvider, make_tool_context
from tests.plugins.mcp.mcp_kit import mcp_runtime, stdio_server


async def test_sampling_uses_slot_minus_one_and_disables_cache_prompt(tmp_path: Path) -> None:
    provider = ScriptedProvider(["forty-two"], slot=0)
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("asker", trust="pure_read")], provider=provider)
    try:
        result = await runtime.registry.get("mcp.asker.ask_model").run({"question": "meaning?"},
                                                                        make_tool_context(tmp_path))
        assert result.summary == "model: forty-two"
        (request,) = provider.requests
        assert request.slot_id == -1 and request.cache_prompt is False and request.grammar is None
        assert "User: meaning?" in request.prompt and request.n_predict == 24
    finally:
        await runtime.close()


async def test_rate_limited_sampling_is_a_json_rpc_error_and_the_transport_survives(tmp_path: Path) -> None:
    provider = ScriptedProvider(["first answer"], slot=0)
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("asker", trust="pure_read")], provider=provider,
                                sampling={"requestsPerMinute": 1})
    try:
        ctx = make_tool_context(tmp_path)
        ok = await runtime.registry.get("mcp.asker.ask_model").run({"question": "one"}, ctx)
        refused = await runtime.registry.get("mcp.asker.ask_model").run({"question": "two"}, ctx)
        assert ok.summary == "model: first answer"
        assert refused.status == "error" and len(provider.requests) == 1
        assert (await runtime.registry.get("mcp.asker.echo").run({"text": "alive"}, ctx)).summary == "echo: alive"
    finally:
        await runtime.close()


async def test_sampling_switched_off_declares_no_capability_and_the_server_is_refused(tmp_path: Path) -> None:
    provider = ScriptedProvider([], slot=0)
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("asker", trust="pure_read")], provider=provider,
                                sampling={"enabled": False})
    try:
        refused = await runtime.registry.get("mcp.asker.ask_model").run({"question": "x"}, make_tool_context(tmp_path))
        assert refused.status == "error" and provider.requests == []
    finally:
        await runtime.close()


async def test_max_tokens_are_capped_by_config(tmp_path: Path) -> None:
    provider = ScriptedProvider(["short"], slot=0)
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("asker", trust="pure_read")], provider=provider,
                                sampling={"maxTokens": 8})
    try:
        await runtime.registry.get("mcp.asker.ask_model").run({"question": "x"}, make_tool_context(tmp_path))
        assert provider.requests[0].n_predict == 8
    finally:
        await runtime.close()
