"""`os.proc.list` (read-only) and `os.proc.kill` (gated under `proc_kill`)."""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

from ..shell.exec_config import ExecConfig, exec_config, tool_environment

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

SORT_KEYS = {"cpu": lambda p: -(p["cpu"] or 0), "mem": lambda p: -(p["mem"] or 0), "pid": lambda p: p["pid"]}
SIGNALS = ("TERM", "KILL", "INT", "HUP", "QUIT", "STOP", "CONT", "USR1", "USR2")


async def list_processes(config: ExecConfig, cancelled: Any = None) -> list[dict[str, Any]]:
    from ..shell.process_runner import run_process
    from .ps_parse import PS_ARGV, parse_ps

    out = await run_process(PS_ARGV, cwd=Path("/"), env=tool_environment(config), timeout_s=30, cancelled=cancelled,
                            head_bytes=8 * 1024 * 1024, tail_bytes=0)
    if out.spawn_error:
        raise RuntimeError("ps is not available here" if "not found" in out.spawn_error else out.spawn_error)
    if out.exit_code != 0:
        raise RuntimeError(f"ps failed: {out.stderr.text().strip()}")
    return parse_ps(out.stdout.text())


async def run_list(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from ..shell.shown_text import escape_for_prompt

    try:
        processes = await list_processes(config, ctx.cancelled)
    except RuntimeError as exc:
        return ToolResult.error(f"os.proc.list: {exc}")
    needle = str(args.get("filter") or "").lower()
    if needle:
        processes = [p for p in processes if needle in p["command"].lower() or needle in p["name"].lower()]
    sort = args.get("sort") or "cpu"
    processes.sort(key=SORT_KEYS.get(sort, SORT_KEYS["cpu"]))
    total = len(processes)
    shown = processes[: int(args.get("limit") or 30)]
    lines = [f"{total} processes" + (f" matching {needle!r}" if needle else "") + f", sorted by {sort}"]
    lines += [f"{p['pid']:>7} {p['user'][:10]:<10} {p['cpu'] or 0:5.1f}% {p['mem'] or 0:5.1f}% "
              f"{escape_for_prompt(p['command'], 120)}" for p in shown]
    return ToolResult.ok("\n".join(lines), processes=shown, total=total)


def _refusal(pid: int) -> str | None:
    if pid <= 1:
        return f"pid {pid} is not a single process you may kill (1 is init; 0 and negatives mean whole groups)"
    if pid == os.getpid():
        return f"pid {pid} is the agent itself"
    return None


async def run_kill(args: Mapping[str, Any], ctx: Any, config: ExecConfig) -> ToolResult:
    from ..shell.ask_approval import ask_approval, call_binding
    from ..shell.shown_text import escape_for_prompt

    pid = args.get("pid")
    sig_name = str(args.get("signal") or "TERM").upper().removeprefix("SIG")
    if isinstance(pid, bool) or not isinstance(pid, int):
        return ToolResult.error("os.proc.kill: pid must be an integer (see os.proc.list)")
    if sig_name not in SIGNALS:
        return ToolResult.error(f"os.proc.kill: signal must be one of {', '.join(SIGNALS)}")
    refusal = _refusal(pid)
    if refusal:
        return ToolResult.error(f"os.proc.kill: refused: {refusal}", refused=True)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return ToolResult.error(f"os.proc.kill: no process with pid {pid}")
    except PermissionError:
        return ToolResult.error(f"os.proc.kill: pid {pid} belongs to another user; the agent may not signal it")
    try:
        info = next((p for p in await list_processes(config, ctx.cancelled) if p["pid"] == pid), None)
    except RuntimeError:
        info = None
    what = f"pid {pid}" + (f" ({escape_for_prompt(info['command'], 160)}, user {info['user']})" if info else "")
    binding = call_binding("os.proc.kill", ctx.working_dir, [f"SIG{sig_name}", str(pid)])
    if not await ask_approval(ctx, "proc_kill", f"send SIG{sig_name} to {what}", binding=binding):
        return ToolResult.error(f"not approved: SIG{sig_name} was not sent to {pid}", denied=True)
    try:
        os.kill(pid, getattr(signal, f"SIG{sig_name}"))
    except ProcessLookupError:
        return ToolResult.error(f"os.proc.kill: pid {pid} exited before the signal was sent")
    except PermissionError:
        return ToolResult.error(f"os.proc.kill: not permitted to signal pid {pid}")
    return ToolResult.ok(f"sent SIG{sig_name} to {what}", pid=pid, signal=sig_name)


def proc_tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    config = exec_config(runtime)

    async def list_run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        return await run_list(args, ctx, config)

    async def kill_run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        return await run_kill(args, ctx, config)

    return [
        ToolSpec(name="os.proc.list", summary="List running processes (pid, user, cpu, memory, command), optionally "
                 "filtered by a substring.",
                 args_schema={"type": "object", "properties": {
                     "filter": {"type": "string"}, "limit": {"type": "integer", "minimum": 1, "maximum": 1000},
                     "sort": {"type": "string", "enum": list(SORT_KEYS)}}, "additionalProperties": False},
                 resource_class=ResourceClass.PURE_READ, run=list_run, durable=True, tier=Tier.RARE,
                 example='{"tool": "os.proc.list", "args": {"filter": "python"}}'),
        ToolSpec(name="os.proc.kill", summary="Send a signal (default TERM) to a process by pid.",
                 args_schema={"type": "object", "properties": {
                     "pid": {"type": "integer"}, "signal": {"type": "string", "enum": list(SIGNALS)}},
                     "required": ["pid"], "additionalProperties": False},
                 resource_class=ResourceClass.APPROVAL_GATED, run=kill_run, tier=Tier.RARE,
                 approval_category="proc_kill", example='{"tool": "os.proc.kill", "args": {"pid": 4242}}'),
    ]
