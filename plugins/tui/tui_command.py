"""The `atomic-agent tui` command: boot the runtime with the TUI as its approval host, run the
app, close the runtime — or, with `--attach [URL]`, attach to a running `serve` (this state
dir's by default) without booting a runtime here. Textual is imported here, inside the command."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail


def tui_command(
    ctx: typer.Context,
    session: str = typer.Option(None, "--session", help="Continue this session."),
    no_mouse: bool = typer.Option(False, "--no-mouse",
                                  help="Do not ask the terminal for mouse reports (it keeps its own text selection); "
                                       "/mouse on turns them on later."),
    attach: bool = typer.Option(False, "--attach",
                                help="Attach to a running `atomic-agent serve` (this state dir's, or the one at URL) "
                                     "and see every session it runs: Telegram's, the scheduler's, other clients'."),
    url: str = typer.Argument(None, metavar="[URL]", show_default=False,
                              help="With --attach: the serve to attach to (default: this state dir's serve)."),
) -> None:
    import asyncio
    import sys

    from atomic_agent.api import SessionNotFoundError, SessionStoreError, create_runtime
    from atomic_agent.plugins.tui.tui_app import AtomicTui
    from atomic_agent.plugins.tui.tui_approver import TuiApprover

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        fail("atomic-agent tui needs a terminal (stdin and stdout); for scripts use `atomic-agent run` or `repl`")
    if url is not None and not attach:
        fail(f"a serve address ({url!r}) goes with --attach: atomic-agent tui --attach {url}")
    state = current_cli_state(ctx)
    if attach:
        _attach(state, url, session, no_mouse)
        return

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


def _attach(state: Any, url: str | None, session: str | None, no_mouse: bool) -> None:
    import asyncio

    from atomic_agent.plugins.tui.serve_attachment import DEFAULT_API_KEY_ENV, AttachError, locate, probe
    from atomic_agent.plugins.tui.tui_app import AtomicTui
    from atomic_agent.plugins.tui.tui_config import TuiConfig, tui_config_of

    boot = state.require()
    config = tui_config_of(boot.config)
    serve_block = boot.config.blocks.get("serve")
    api_key_env = getattr(serve_block, "api_key_env", None) or DEFAULT_API_KEY_ENV
    state_dir = Path(boot.state_dir)

    async def go() -> None:
        attachment = locate(state_dir, url, api_key_env)
        await probe(attachment)  # down or refused: said before the screen is taken
        app = AtomicTui(None, session_id=session, mouse=False if no_mouse else None, attachment=attachment,
                        config=config if isinstance(config, TuiConfig) else None)
        await app.run_async(mouse=True)

    try:
        asyncio.run(go())
    except AttachError as exc:
        fail(str(exc))
