"""`atomic-agent repl`: one session, one turn per input line, until `finish` or EOF."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail


def repl_command(
    ctx: typer.Context,
    session: str = typer.Option(None, "--session", help="Continue this session."),
    json_out: bool = typer.Option(False, "--json", help="Stream the typed events as NDJSON on stdout."),
    no_approval: bool = typer.Option(False, "--no-approval", help="Full trust (level 5) for this process only."),
) -> None:

    import asyncio

    from atomic_agent.api import SessionNotFoundError, SessionStoreError, text_problem
    from atomic_agent.plugins.chat_cli.stdin_lines import StdinLines
    from atomic_agent.plugins.chat_cli.turn_runner import event_sink, open_runtime, run_one_turn

    state = current_cli_state(ctx)
    emit = event_sink(json_out)
    interactive = sys.stdin.isatty()

    async def go() -> None:
        lines = StdinLines.of_stdin()  # shared with the approval prompt (stdin_lines says why)
        runtime = await open_runtime(state, emit, no_approval, lines)
        session_id = session
        try:
            while True:
                if interactive:
                    print("> ", end="", file=sys.stderr, flush=True)
                raw = await lines.next_line()
                if not raw:
                    break
                text = raw.decode("utf-8", "surrogateescape").strip()  # bad bytes are refused below, not fatal
                if not text:
                    continue
                problem = text_problem(text, "the line")
                if problem is not None:
                    print(f"atomic-agent: {problem}", file=sys.stderr, flush=True)
                    continue
                result = await run_one_turn(runtime, text, session_id, emit, Path.cwd())
                session_id = result.session_id
                if not json_out and result.status == "done":
                    print(result.reply, flush=True)
                if result.reason == "finish":
                    break
        finally:
            await runtime.close()
        if session_id and not json_out:
            print(f"session: {session_id}", file=sys.stderr)

    try:
        asyncio.run(go())
    except (SessionNotFoundError, SessionStoreError) as exc:
        fail(str(exc))
