"""A live tool withdrawn after its call was checked but before it runs (an MCP server
dropping a tool mid-batch) gives the model a plain tool error, and the turn goes on."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime

OBJ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
OWNER = "mcp:flaky"


class WithdrawingServer:
    """`x.withdraw` removes every live tool of OWNER, as a server's tools/list_changed would;
    it shares the memory-write group with `flaky.echo`, so it runs first (serial, index order)."""

    __test__ = False

    def __init__(self) -> None:
        self.echo_ran = False

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        async def withdraw(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            ctx.services["tool_registry"].set_live_tools(OWNER, [])
            return ToolResult.ok("withdrawn")

        return [ToolSpec("x.withdraw", "Withdraw the flaky tools.", OBJ, ResourceClass.MEMORY_WRITE, withdraw)]

    def live_echo(self) -> ToolSpec:
        async def echo(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            self.echo_ran = True
            return ToolResult.ok(f"echo {args['path']}")

        return ToolSpec("flaky.echo", "Echo a path.", OBJ, ResourceClass.MEMORY_WRITE, echo)


async def test_tool_withdrawn_between_check_and_run_is_a_tool_error_for_the_model(tmp_path: Path):
    server = WithdrawingServer()
    provider = ScriptedProvider([calls(("x.withdraw", {"path": "a"}), ("flaky.echo", {"path": "b"})),
                                 calls(("reply", {"text": "noted"}))])
    rt = make_runtime(tmp_path, provider, extra=[(server, "flaky_server")])
    rt.registry.set_live_tools(OWNER, [server.live_echo()])
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert (result.status, result.reply) == ("done", "noted")
    assert not server.echo_ran
    assert rt.registry.get("flaky.echo") is None
    entries = rt.sessions.load(result.session_id).entries
    results = {e.tool: e for e in entries if e.kind == "tool_result"}
    assert results["x.withdraw"].status == "ok"
    gone = results["flaky.echo"]
    assert gone.status == "error"
    assert "'flaky.echo' is no longer a registered tool" in gone.text
    assert "NameError" not in gone.text
    assert "'flaky.echo' is no longer a registered tool" in provider.requests[-1].prompt  # the model is told
    await rt.close()
