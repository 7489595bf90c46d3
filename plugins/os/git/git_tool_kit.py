"""What every git tool shares: the args of the common `path`, building a ToolSpec, and
turning a git or argument error into a tool error."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

from ..shell.exec_config import ExecConfig

PATH_PROP = {"type": "string", "description": "a directory inside the repository (default: the session's)"}

GitRun = Callable[[Mapping[str, Any], Any, ExecConfig], Awaitable[ToolResult]]


def git_spec(name: str, summary: str, properties: dict[str, Any], run: GitRun, config: ExecConfig,
             tier: Tier, example: str, required: tuple[str, ...] = ()) -> ToolSpec:
    schema = {"type": "object", "properties": {"path": PATH_PROP, **properties}, "additionalProperties": False}
    if required:
        schema["required"] = list(required)

    async def runner(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        from .git_args import GitArgsError
        from .git_runner import GitError

        try:
            return await run(args, ctx, config)
        except (GitArgsError, GitError) as exc:
            return ToolResult.error(f"{name}: {exc}")

    return ToolSpec(name=name, summary=summary, args_schema=schema, resource_class=ResourceClass.PURE_READ,
                    run=runner, tier=tier, durable=True, example=example)


def truncation_note(truncated: bool, total: int) -> str:
    return f"\n(git printed {total} bytes; only the first part was parsed)" if truncated else ""
