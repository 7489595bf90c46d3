"""`os.notify`, `os.clipboard.read` and `os.clipboard.write`, where the desktop has them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

from ..shell.exec_config import ExecConfig, exec_config, tool_environment

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

    from .desktop_commands import DesktopCommand

TIMEOUT_S = 10.0
CLIPBOARD_MAX_BYTES = 1024 * 1024


async def _run(command: DesktopCommand, config: ExecConfig, ctx: Any, stdin: bytes | None = None) -> Any:
    from ..shell.process_runner import run_process
    from .desktop_commands import DESKTOP_ENV

    return await run_process(command.argv, cwd=Path(ctx.working_dir), env=tool_environment(config, DESKTOP_ENV),
                             timeout_s=TIMEOUT_S, cancelled=ctx.cancelled, stdin=stdin,
                             head_bytes=CLIPBOARD_MAX_BYTES, tail_bytes=0, discard_output=command.forks_owner)


def _failure(tool: str, out: Any) -> ToolResult | None:
    if out.spawn_error:
        return ToolResult.error(f"{tool}: {out.spawn_error}")
    if out.timed_out:
        return ToolResult.error(f"{tool}: the desktop helper did not answer within {TIMEOUT_S:g}s")
    if out.exit_code != 0:
        return ToolResult.error(f"{tool}: the desktop helper failed (exit {out.exit_code}): "
                                f"{out.stderr.text().strip()[:300]}")
    return None


async def run_notify(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from .desktop_commands import Unavailable, notify_command

    title = args.get("title")
    if not isinstance(title, str) or not title.strip():
        return ToolResult.error("os.notify: title must be a non-empty string")
    command = notify_command(title, str(args.get("body") or ""), str(args.get("urgency") or "normal"), os.environ)
    if isinstance(command, Unavailable):
        return ToolResult.error(f"os.notify: {command.reason}", unavailable=True)
    out = await _run(command, config, ctx)
    return _failure("os.notify", out) or ToolResult.ok(f"notification shown: {title[:120]}", argv=list(command.argv))


async def run_clipboard_read(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from ..shell.shown_text import excerpt, fenced
    from .desktop_commands import Unavailable, clipboard_command

    command = clipboard_command("read", os.environ)
    if isinstance(command, Unavailable):
        return ToolResult.error(f"os.clipboard.read: {command.reason}", unavailable=True)
    out = await _run(command, config, ctx)
    failed = _failure("os.clipboard.read", out)
    if failed:
        return failed
    text = out.stdout.text()
    return ToolResult.ok(fenced(excerpt(text, 900), f"clipboard ({out.stdout.total} bytes)"), text=text,
                         truncated=out.stdout.truncated)


async def run_clipboard_write(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from .desktop_commands import Unavailable, clipboard_command

    text = args.get("text")
    if not isinstance(text, str):
        return ToolResult.error("os.clipboard.write: text must be a string")
    data = text.encode("utf-8", "surrogateescape")
    if len(data) > CLIPBOARD_MAX_BYTES:
        return ToolResult.error(f"os.clipboard.write: text is larger than {CLIPBOARD_MAX_BYTES} bytes")
    command = clipboard_command("write", os.environ)
    if isinstance(command, Unavailable):
        return ToolResult.error(f"os.clipboard.write: {command.reason}", unavailable=True)
    out = await _run(command, config, ctx, stdin=data)
    return _failure("os.clipboard.write", out) or ToolResult.ok(f"copied {len(text)} chars to the clipboard")


def desktop_tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    config = exec_config(runtime)

    def bind(func: Any) -> Any:
        async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            return await func(args, ctx, config)
        return run

    return [
        ToolSpec(name="os.notify", summary="Show a desktop notification (title, optional body).",
                 args_schema={"type": "object", "properties": {
                     "title": {"type": "string"}, "body": {"type": "string"},
                     "urgency": {"type": "string", "enum": ["low", "normal", "critical"]}},
                     "required": ["title"], "additionalProperties": False},
                 resource_class=ResourceClass.MEMORY_WRITE, run=bind(run_notify), tier=Tier.RARE,
                 example='{"tool": "os.notify", "args": {"title": "Build finished"}}'),
        ToolSpec(name="os.clipboard.read", summary="Read the text on the desktop clipboard.",
                 args_schema={"type": "object", "properties": {}, "additionalProperties": False},
                 resource_class=ResourceClass.PURE_READ, run=bind(run_clipboard_read), durable=True,
                 tier=Tier.RARE,
                 example='{"tool": "os.clipboard.read", "args": {}}'),
        ToolSpec(name="os.clipboard.write", summary="Put text on the desktop clipboard.",
                 args_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"],
                              "additionalProperties": False},
                 resource_class=ResourceClass.MEMORY_WRITE, run=bind(run_clipboard_write), tier=Tier.RARE,
                 example='{"tool": "os.clipboard.write", "args": {"text": "hello"}}'),
    ]
