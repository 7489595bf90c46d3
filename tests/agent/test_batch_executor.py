"""The batch executor when the turn's own task is cancelled (a hard cancel, not the turn's
`cancelled` event): no call is left running unseen, and a call that had already finished
keeps its result."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from atomic_agent.agent.batch_executor import CallOutcome, execute_batch
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.agent.tool_calls import ToolCall
from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.tools.tool_registry import ToolRegistry

OBJ = {"type": "object", "properties": {}}


async def _never(args: Mapping[str, Any], ctx: Any) -> ToolResult:
    raise AssertionError("the executor calls run_call, not the spec's function")


def _registry(resource_class: ResourceClass) -> ToolRegistry:
    return ToolRegistry([ToolSpec("t.call", "A call.", OBJ, resource_class, _never)])


@pytest.mark.parametrize("resource_class", [ResourceClass.PURE_READ, ResourceClass.FS_WRITE])
async def test_a_cancelled_turn_stops_its_running_call_instead_of_leaving_it_running(
        resource_class: ResourceClass) -> None:
    started, stopped = asyncio.Event(), asyncio.Event()

    async def run_call(index: int, call: ToolCall) -> ToolResult:
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            stopped.set()
            raise
        return ToolResult.ok("never")

    batch = asyncio.ensure_future(execute_batch([ToolCall("t.call")], _registry(resource_class), ToolLoopTracker(),
                                                run_call, asyncio.Event()))
    await started.wait()
    batch.cancel()
    await asyncio.gather(batch, return_exceptions=True)
    assert batch.cancelled() and stopped.is_set()  # stopped by the time the batch is


@pytest.mark.parametrize("resource_class", [ResourceClass.PURE_READ, ResourceClass.FS_WRITE])
async def test_a_call_that_finished_as_the_turn_was_cancelled_keeps_its_result(resource_class: ResourceClass) -> None:
    kept: list[CallOutcome] = []
    batch: asyncio.Future[Any] | None = None

    async def run_call(index: int, call: ToolCall) -> ToolResult:
        assert batch is not None
        batch.cancel()  # the cancel lands before the executor sees this call's result
        return ToolResult.ok("written")

    batch = asyncio.ensure_future(execute_batch([ToolCall("t.call")], _registry(resource_class), ToolLoopTracker(),
                                                run_call, asyncio.Event(), on_outcome=kept.append))
    await asyncio.gather(batch, return_exceptions=True)
    assert batch.cancelled()
    assert [(o.index, o.result.status, o.result.summary) for o in kept] == [(0, "ok", "written")]
