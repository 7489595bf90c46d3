"""`tools list [--json]`, `tools show NAME [--json]` and `tools call NAME --args JSON ...`."""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from atomic_agent.api import current_cli_state, fail

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

tools_app = typer.Typer(no_args_is_help=True, add_completion=False)

APPROVE_MODES = ("never", "once")


def _rows(runtime: RuntimeView) -> list[dict[str, Any]]:
    from atomic_agent.plugins.tools_cli.tool_descriptor import descriptor_row

    return [descriptor_row(s) for s in runtime.registry.specs()]


@tools_app.command("list")
def list_command(ctx: typer.Context,
                 json_out: bool = typer.Option(False, "--json", help="Print the tools as JSON.")) -> None:
    """Every registered tool: name, plugin, tier, resource class, approval category (--json adds
    the summary and the args schema)."""
    import asyncio

    from atomic_agent.api import create_runtime, print_json, print_table

    state = current_cli_state(ctx)

    async def go() -> list[dict[str, Any]]:
        runtime = await create_runtime(boot_context=state.require())
        try:
            return _rows(runtime)
        finally:
            await runtime.close()

    rows = asyncio.run(go())
    if json_out:
        print_json(rows)
        return
    print_table(["name", "plugin", "tier", "class", "approval"],
                [[r["name"], r["plugin"], r["tier"], r["resourceClass"], r["approvalCategory"] or "-"] for r in rows])


@tools_app.command("show")
def show_command(ctx: typer.Context,
                 name: str = typer.Argument(..., help="Tool name, e.g. os.fs.read."),
                 json_out: bool = typer.Option(False, "--json", help="Print the descriptor as JSON.")) -> None:
    """One tool's whole descriptor: summary, args schema, tier, resource class, approval category, example."""
    import asyncio
    import difflib

    from atomic_agent.api import create_runtime, print_json
    from atomic_agent.plugins.tools_cli.tool_descriptor import full_descriptor, render_descriptor

    state = current_cli_state(ctx)

    async def go() -> tuple[dict[str, Any] | None, list[str]]:
        runtime = await create_runtime(boot_context=state.require())
        try:
            spec = runtime.registry.get(name)
            return (full_descriptor(spec) if spec is not None else None), runtime.registry.names()
        finally:
            await runtime.close()

    descriptor, names = asyncio.run(go())
    if descriptor is None:
        close = difflib.get_close_matches(name, names, n=3)
        hint = f"did you mean {', '.join(close)}? " if close else ""
        fail(f"no tool named {name!r}; {hint}`atomic-agent tools list` shows every registered tool")
    if json_out:
        print_json(descriptor)
    else:
        print(render_descriptor(descriptor))


@tools_app.command("call")
def call_command(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Tool name, e.g. os.fs.read."),
    args: str = typer.Option("{}", "--args", help="The tool's args as a JSON object."),
    session: str = typer.Option(None, "--session", help="Run as this session (its grants and working dir)."),
    cwd: Path = typer.Option(None, "--cwd", help="Working directory (default: the session's, else current)."),
    approve: str = typer.Option(None, "--approve",
                                help="Answer approval prompts without asking: never (deny) or once (allow this call)."),
    no_approval: bool = typer.Option(False, "--no-approval", help="Full trust (level 5) for this process only."),
    json_out: bool = typer.Option(False, "--json", help="Print the full result (status, summary, details) as JSON."),
) -> None:
    """Run one tool through the same validation and approval gate as the agent loop."""
    import asyncio

    from atomic_agent.api import (
        SessionNotFoundError,
        compress_result,
        create_runtime,
        parse_json_object,
        stdin_approver,
    )
    from atomic_agent.plugins.tools_cli.call_one_tool import CallRefused, call_one_tool, transient_session_id

    if approve is not None and approve not in APPROVE_MODES:
        fail(f"--approve must be one of {', '.join(APPROVE_MODES)}, got {approve!r}")
    parsed = parse_json_object(args, "--args", '{"path": "README.md"}')
    state = current_cli_state(ctx)
    boot = state.require()

    async def go() -> Any:
        runtime = await create_runtime(boot_context=boot, ask=stdin_approver(fixed=approve), no_approval=no_approval)
        try:
            working_dir = cwd
            session_id = session or transient_session_id()
            if session:
                loaded = runtime.sessions.load(session)
                working_dir = working_dir or loaded.working_dir
            cancelled = asyncio.Event()
            loop = asyncio.get_running_loop()
            try:
                loop.add_signal_handler(signal.SIGINT, cancelled.set)
            except (NotImplementedError, RuntimeError):
                pass
            return await call_one_tool(runtime, name, parsed, session_id=session_id,
                                       working_dir=(working_dir or Path.cwd()).resolve(), cancelled=cancelled), \
                runtime.config.agent.tool_result_summary_chars
        finally:
            await runtime.close()

    try:
        outcome, cap = asyncio.run(go())
    except CallRefused as exc:
        fail(str(exc))
    except SessionNotFoundError as exc:
        fail(str(exc))
    result = outcome.result
    if json_out:
        print(json.dumps({"tool": outcome.tool, "sessionId": outcome.session_id, "workingDir": str(outcome.working_dir),
                          "status": result.status, "summary": result.summary, "details": dict(result.details)},
                         indent=2, ensure_ascii=False, default=str))
    else:
        print(compress_result(result, cap).summary)
        if result.status != "ok":
            print(f"atomic-agent: {outcome.tool} {result.status}", file=sys.stderr)
    raise typer.Exit({"ok": 0, "cancelled": 130}.get(result.status, 1))
