"""Tools that count their runs and can hang, and a way to 'crash' a runtime mid-batch.

A crash is simulated the way the kernel ends a process: the abandoned runtime's database
connection goes away (it writes nothing more), its tasks stop, its owner lock is released;
then a new Runtime opens the same state directory and recovers.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.agent.loop_harness import make_runtime

OBJ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class CrashTools:
    """`c.read` is durable, `c.write` is not; both hang while `hang` is set."""

    __test__ = False

    def __init__(self) -> None:
        self.runs: Counter[str] = Counter()
        self.hang = True

    async def _run(self, name: str, args: Mapping[str, Any]) -> ToolResult:
        self.runs[name] += 1
        if self.hang:
            await asyncio.Event().wait()  # never set: only a crash or a cancel ends it
        return ToolResult.ok(f"{name} {args['path']} run {self.runs[name]}")

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        async def read(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            return await self._run("c.read", args)

        async def write(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            return await self._run("c.write", args)

        return [ToolSpec("c.read", "A durable read.", OBJ, ResourceClass.PURE_READ, read, durable=True),
                ToolSpec("c.write", "A write with a side effect.", OBJ, ResourceClass.MEMORY_WRITE, write)]


def runtime_with(tmp_path: Path, provider: ScriptedProvider, tools: CrashTools) -> Runtime:
    return make_runtime(tmp_path, provider, extra=[(tools, "crash_tools")])


async def crash(runtime: Runtime, task: asyncio.Future[Any]) -> None:
    """The process dies: its connection goes away first, so the zombie cannot write."""
    runtime.sessions.close()
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    lifecycle = getattr(runtime, "_lifecycle", None)
    if lifecycle is not None:
        lifecycle.lease.release()


def raw_transcript(runtime: Runtime, session_id: str) -> list[tuple[Any, ...]]:
    return runtime.sessions.conn.execute("select * from transcript where session_id = ? order by seq",
                                       [session_id]).fetchall()
