"""`atomic-agent run MESSAGE`: one turn; progress on stderr, the reply on stdout."""

from __future__ import annotations

from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail


def run_command(
    ctx: typer.Context,
    message: str = typer.Argument(..., help="What to ask the agent."),
    session: str = typer.Option(None, "--session", help="Continue this session (see `sessions list`)."),
    json_out: bool = typer.Option(False, "--json", help="Stream the typed events as NDJSON on stdout."),
    cwd: Path = typer.Option(None, "--cwd", help="Working directory of a new session (default: current)."),
    no_approval: bool = typer.Option(False, "--no-approval", help="Full trust (level 5) for this process only."),
    tool_choice: str = typer.Option(None, "--tool-choice", metavar="TOOL",
                                    help="Make the first step call this tool (local grammar transport)."),
) -> None:

    import asyncio
    import sys

    from atomic_agent.api import (
        InvalidTextError,
        SessionNotFoundError,
        SessionStoreError,
        TurnParkedError,
        UnknownToolChoiceError,
        text_problem,
    )
    from atomic_agent.plugins.chat_cli.stdin_lines import StdinLines
    from atomic_agent.plugins.chat_cli.turn_runner import (
        event_sink,
        exit_code,
        kept_message_note,
        open_runtime,
        run_one_turn,
    )

    problem = text_problem(message)  # before the runtime opens anything: a bad argument writes nothing
    if problem is not None:
        fail(str(problem))
    state = current_cli_state(ctx)
    emit = event_sink(json_out)

    async def go() -> int:
        runtime = await open_runtime(state, emit, no_approval, StdinLines.of_stdin())
        try:
            result = await run_one_turn(runtime, message, session, emit, (cwd or Path.cwd()).resolve(),
                                        tool_choice=tool_choice)
        finally:
            await runtime.close()
        if not json_out:
            if result.status == "done":
                print(result.reply)
            note = kept_message_note(result)
            if note:
                print(f"atomic-agent: {note}", file=sys.stderr)
            print(f"session: {result.session_id}", file=sys.stderr)
        return exit_code(result)

    try:
        code = asyncio.run(go())
    except TurnParkedError as exc:
        fail(str(exc), 143)
    except (SessionNotFoundError, SessionStoreError, UnknownToolChoiceError, InvalidTextError) as exc:
        fail(str(exc))
    raise typer.Exit(code)
