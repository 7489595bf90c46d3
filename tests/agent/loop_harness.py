"""A runtime over a scripted provider and in-process test tools, for loop invariant tests."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass, Tier, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import boot_for_test
from atomic_agent.testing.scripted_provider import ScriptedProvider

WAIT_S = 30.0  # a safety net for a hung test, never a speed expectation

OBJ = {"type": "object", "properties": {"path": {"type": "string"}, "ms": {"type": "integer"}}, "required": ["path"]}


class ToolLog:
    def __init__(self) -> None:
        self.started: list[tuple[str, str, float]] = []
        self.finished: list[tuple[str, str, float]] = []
        # t.read on a path named here waits until the test sets its event (instead of its `ms`),
        # so a test can act "while the tool runs" without racing a timer on a loaded machine
        self.holds: dict[str, asyncio.Event] = {}

    def hold(self, *paths: str) -> asyncio.Event:
        """Hold t.read on each of `paths` until the test sets the returned event."""
        release = asyncio.Event()
        self.holds.update(dict.fromkeys(paths, release))
        return release

    async def running(self, *paths: str) -> None:
        """Wait until a tool call on each of `paths` has started."""
        await until(lambda: set(paths) <= {path for _, path, _ in self.started})


async def until(condition: Callable[[], bool]) -> None:
    """Yield to the loop until `condition()` holds (WAIT_S is only a hung-test net)."""
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, "condition never held"
        await asyncio.sleep(0.005)


def make_tools(log: ToolLog) -> list[ToolSpec]:
    async def read(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        log.started.append(("t.read", args["path"], time.perf_counter()))
        if args["path"] in log.holds:
            await log.holds[args["path"]].wait()
        else:
            await asyncio.sleep(args.get("ms", 0) / 1000)
        log.finished.append(("t.read", args["path"], time.perf_counter()))
        if args["path"] == "boom":
            raise RuntimeError("disk on fire")
        return ToolResult.ok(f"contents of {args['path']}", path=args["path"])

    async def store(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        log.started.append(("t.store", args["path"], time.perf_counter()))
        await asyncio.sleep(args.get("ms", 0) / 1000)
        log.finished.append(("t.store", args["path"], time.perf_counter()))
        return ToolResult.ok(f"stored {args['path']}")

    async def gated(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        approved = await ctx.request_approval("shell", f"run {args['path']}")
        return ToolResult.ok("ran") if approved else ToolResult.error("denied")

    async def hang(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        log.started.append(("t.hang", args["path"], time.perf_counter()))
        await asyncio.sleep(3600)
        return ToolResult.ok("never")

    async def rare(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        return ToolResult.ok("rare ran")

    async def huge(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        return ToolResult.ok("x" * 50_000_000 + b"\xff\xfe".decode("utf-8", "surrogateescape"), blob=b"\xff" * 10)

    return [
        ToolSpec("t.read", "Read a thing.", OBJ, ResourceClass.PURE_READ, read,
                 example='{"tool": "t.read", "args": {"path": "a"}}'),
        ToolSpec("t.store", "Store a thing.", OBJ, ResourceClass.MEMORY_WRITE, store),
        ToolSpec("t.gated", "A gated thing.", OBJ, ResourceClass.APPROVAL_GATED, gated, approval_category="shell"),
        ToolSpec("t.hang", "Never returns.", OBJ, ResourceClass.PURE_READ, hang),
        ToolSpec("t.rare", "A rare thing.", {**OBJ, "properties": {"path": {"type": "string"}, "n": {"type": "integer"}},
                                             "required": ["path", "n"]},
                 ResourceClass.PURE_READ, rare, tier=Tier.RARE),
        ToolSpec("t.huge", "Returns 50 MB.", OBJ, ResourceClass.PURE_READ, huge),
    ]


class TestToolsPlugin:
    __test__ = False

    def __init__(self, log: ToolLog) -> None:
        self.log = log

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        return make_tools(self.log)


def make_runtime(tmp_path: Path, provider: ScriptedProvider, log: ToolLog | None = None, *,
                 environ: dict[str, str] | None = None, ask: Any = None, extra: list[tuple[object, str]] = ()) -> Runtime:
    env = dict(environ or {})
    plugins = {"test_tools": TestToolsPlugin(log or ToolLog()), **{name: plugin for plugin, name in extra}}
    ctx = boot_for_test(tmp_path / "state", plugins=plugins, environ=env)
    return Runtime(ctx, provider=provider, ask=ask, environ=env)
