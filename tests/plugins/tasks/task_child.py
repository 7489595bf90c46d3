"""A child process that runs one due task and is killed (SIGKILL) by its parent mid-run.

    python -m tests.plugins.tasks.task_child <tmp_path> <now_ms>

The task's turn first calls `t.store` (the side effect: the child appends a line to
`effects.log`, fsync'd) and then `t.hang`, which never returns: the parent kills the child
while the turn is running.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.tasks.task_kit import FakeClock, task_runtime

EFFECTS = "effects.log"
OBJ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class EffectTools:
    def __init__(self, root: Path) -> None:
        self.root = root

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        async def effect(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            with open(self.root / EFFECTS, "a") as f:
                f.write(f"{os.getpid()} {args['path']}\n")
                f.flush()
                os.fsync(f.fileno())
            return ToolResult.ok("done")

        return [ToolSpec("x.effect", "A side effect.", OBJ, ResourceClass.MEMORY_WRITE, effect)]


def effect_then_hang() -> ScriptedProvider:
    return ScriptedProvider([calls(("x.effect", {"path": "sent"})), calls(("t.hang", {"path": "forever"}))])


async def main(root: Path, now_ms: int) -> None:
    from tests.agent.loop_harness import make_runtime  # noqa: F401  (same harness as the parent)

    rt = await task_runtime(root, effect_then_hang(), FakeClock(now_ms), extra_plugins=[(EffectTools(root), "fx")])
    await rt.service("tasks").runner.run_due()


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))
