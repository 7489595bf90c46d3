"""The two tools of the chaos world, registered through an ordinary plugin.

`chaos.effect` is a non-durable side effect: it appends (pid, life, id) to the side-effect
log outside the database and refuses to run at all for a process already declared dead.
`chaos.read` is durable (safe to re-run after a crash); its runs are logged too.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Mapping
from typing import Any

from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from tests.chaos.conversation_reader import EFFECT, READ
from tests.chaos.world_log import JsonLog

ID_ARGS = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def chaos_tools(life: str, check_alive: Callable[[], None], effects: JsonLog, reads: JsonLog) -> list[ToolSpec]:
    async def effect(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        check_alive()
        await asyncio.sleep(0)  # a real effect takes time: a stop or a crash may land first
        check_alive()
        effects.append({"pid": os.getpid(), "life": life, "id": args["id"]})
        await asyncio.sleep(0)
        return ToolResult.ok(f"effect {args['id']} done")

    async def read(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        check_alive()
        reads.append({"pid": os.getpid(), "life": life, "id": args["id"]})
        return ToolResult.ok(f"read {args['id']}")

    return [ToolSpec(EFFECT, "Do the side effect for a message.", ID_ARGS, ResourceClass.FS_WRITE, effect),
            ToolSpec(READ, "Read the state for a message.", ID_ARGS, ResourceClass.PURE_READ, read, durable=True)]


class ChaosToolsPlugin:
    def __init__(self, tools: list[ToolSpec]) -> None:
        self.tools = tools

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        return self.tools
