"""The `atomic-agent tui` command: boot the runtime with the TUI as its approval host, run the
app, close the runtime. Textual is imported here, inside the command."""

from __future__ import annotations

from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail


def tui_command(
    ctx: typer.Context,
    session: str = typer.Option(None, "--session", help="Continue this session."),
    no_mouse: bool = typer.Option(False, "--no-mouse",
                                  help="Do not ask the terminal for mouse reports (it keeps its own text selection); "
                                       "/mouse on turns them on later."),
) -> None:
    import asyncio
    import sys

    from atomic_agent.api import SessionNotFoundError, SessionStoreError, create_runtime
    from atomic_agent.plugins.tui.tui_app import AtomicTui
    from atomic_agent.plugins.tui.tui_approver import TuiApprover

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        fail("atomic-agent tui needs a terminal (stdin and stdout); for scripts use `atomic-agent run` or `repl`")
    state = current_cli_state(ctx)

    async def go() -> None:
        approver = TuiApprover()
        runtime = await create_runtime(boot_context=state.require(), ask=approver.ask)
        try:
            await runtime.recover(resume=False)
            if session:
                runtime.open_session(session)  # a wrong id fails here, before the screen is taken
            app = AtomicTui(runtime, session_id=session, mouse=False if no_mouse else None,
                            working_dir=Path.cwd(), approver=approver)
            await app.run_async(mouse=True)  # always able to report: the live switch decides (/mouse on)
        finally:
            await runtime.close()

    try:
        asyncio.run(go())
    except (SessionNotFoundError, SessionStoreError) as exc:
        fail(str(exc))
