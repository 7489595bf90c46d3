"""Trust and approvals: gated servers ask under `other` and run alone, except exactly
`readOnlyHint: true`; a denial never reaches the server; pure_read servers fan out; a
failed MCP call is an error result that never aborts its batch siblings."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.agent.batch_executor import execute_batch
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.agent.tool_calls import ToolCall, batch_problems
from atomic_agent.api import ResourceClass, make_tool_context
from tests.plugins.mcp.mcp_kit import mcp_runtime, stdio_server


async def test_gated_server_asks_under_other_and_runs_alone_read_only_hint_is_exempt(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo")])
    try:
        write, echo = runtime.registry.get("mcp.demo.write_note"), runtime.registry.get("mcp.demo.echo")
        assert write.resource_class is ResourceClass.APPROVAL_GATED and write.approval_category == "other"
        assert echo.resource_class is ResourceClass.APPROVAL_GATED and echo.approval_category is None
        asked: list[str] = []

        async def request_approval(category: str, summary: str, **_: object) -> bool:
            asked.append(category)
            return True

        ctx = make_tool_context(tmp_path)
        ctx.request_approval = request_approval
        assert (await echo.run({"text": "hi"}, ctx)).summary == "echo: hi" and asked == []
        assert (await write.run({"text": "n"}, ctx)).summary == "noted: n" and asked == ["other"]
        calls = [ToolCall("mcp.demo.echo", {"text": "a"}), ToolCall("mcp.demo.add", {"a": 1, "b": 2})]
        assert any("must be the only call" in p for p in batch_problems(calls, runtime.registry, 8))
    finally:
        await runtime.close()


async def test_denied_call_never_reaches_the_server_and_is_marked_approval_denied(tmp_path: Path) -> None:
    marker = tmp_path / "contacted.txt"
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo", env={"DEMO_MARKER_FILE": str(marker)})])
    try:
        denied = await runtime.registry.get("mcp.demo.write_note").run({"text": "x"},
                                                                       make_tool_context(tmp_path, approve=False))
        assert denied.status == "error" and denied.details["approvalDenied"] is True
        assert "not contacted" in denied.summary and not marker.exists()
        allowed = await runtime.registry.get("mcp.demo.write_note").run({"text": "y"}, make_tool_context(tmp_path))
        assert allowed.status == "ok" and marker.read_text() == "write_note y\n"
    finally:
        await runtime.close()


async def test_gate_decides_through_the_runtime_gate_and_its_audit(tmp_path: Path) -> None:
    requests = []

    async def ask(request):  # the host's prompt: say no
        requests.append(request)
        return False

    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("demo")], ask=ask)
    try:
        from atomic_agent.api import ToolContext, approval_gate

        ctx = ToolContext("s1", tmp_path, tmp_path, asyncio.Event(),
                          approval_gate.bind_request_approval(runtime.gate, "s1", "mcp.demo.write_note"))
        result = await runtime.registry.get("mcp.demo.write_note").run({"text": "z"}, ctx)
        assert result.details["approvalDenied"] is True
        assert [(r.tool, r.category) for r in requests] == [("mcp.demo.write_note", "other")]
        assert "MCP demo › write_note" in requests[0].summary
    finally:
        await runtime.close()


async def test_pure_read_server_fans_out_in_one_batch_without_asking(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("fast", trust="pure_read")])
    try:
        spec = runtime.registry.get("mcp.fast.write_note")
        assert spec.resource_class is ResourceClass.PURE_READ and spec.approval_category is None
        calls = [ToolCall("mcp.fast.slow", {"seconds": 0.5}), ToolCall("mcp.fast.slow", {"seconds": 0.5}),
                 ToolCall("mcp.fast.add", {"a": 1, "b": 1})]
        assert batch_problems(calls, runtime.registry, 8) == []
        running: list[int] = []
        peak = [0]

        async def run_call(index: int, call: ToolCall):
            running.append(index)
            peak[0] = max(peak[0], len(running))
            try:
                return await runtime.registry.get(call.tool).run(call.args, make_tool_context(tmp_path, approve=False))
            finally:
                running.remove(index)

        result = await execute_batch(calls, runtime.registry, ToolLoopTracker(), run_call, asyncio.Event())
        assert [o.result.summary for o in result.outcomes] == ["slept 0.5", "slept 0.5", "2"]
        assert peak[0] == 3  # all three were in flight together
    finally:
        await runtime.close()


async def test_a_failing_mcp_call_is_an_error_result_and_never_aborts_its_siblings(tmp_path: Path) -> None:
    runtime = await mcp_runtime(tmp_path / "state", [stdio_server("fast", trust="pure_read")])
    try:
        calls = [ToolCall("mcp.fast.broken", {}), ToolCall("mcp.fast.echo", {"text": "still here"})]

        async def run_call(index: int, call: ToolCall):
            return await runtime.registry.get(call.tool).run(call.args, make_tool_context(tmp_path))

        result = await execute_batch(calls, runtime.registry, ToolLoopTracker(), run_call, asyncio.Event())
        broken, echo = result.outcomes
        assert broken.result.status == "error" and "reported an error: Error executing tool broken" in broken.result.summary
        assert echo.result.status == "ok" and echo.result.summary == "echo: still here"
    finally:
        await runtime.close()
