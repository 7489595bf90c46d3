"""`atomic-agent sandbox list|diff|apply|discard`: the sessions' worktrees (sandbox.worktree)."""

from __future__ import annotations

from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

sandbox_app = typer.Typer(no_args_is_help=True)


def _state_dir(ctx: typer.Context) -> Path:
    return current_cli_state(ctx).require().state_dir


@sandbox_app.command("list")
def sandbox_list_command(ctx: typer.Context,
                         json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The sessions with a worktree: session, workspace, changed files."""
    from .session_worktree import WorktreeError, changed_files, list_records

    rows = []
    try:
        for record in list_records(_state_dir(ctx)):
            files = changed_files(record) if Path(record.worktree).is_dir() else []
            rows.append({"session": record.session_id, "workspace": str(record.workspace),
                         "worktree": record.worktree, "changed": len(files)})
    except WorktreeError as exc:
        fail(str(exc))
    if json_out:
        print_json(rows)
    elif not rows:
        typer.echo("no session has a worktree")
    else:
        print_table(["session", "workspace", "changed"], [[r["session"], r["workspace"], r["changed"]] for r in rows])


@sandbox_app.command("diff")
def sandbox_diff_command(ctx: typer.Context, session: str = typer.Argument(..., help="Session id."),
                         stat: bool = typer.Option(False, "--stat", help="Only the changed files and line counts.")
                         ) -> None:
    """What the session's worktree changed, as a unified diff."""
    from .session_worktree import WorktreeError, load_record, worktree_diff

    try:
        record = load_record(_state_dir(ctx), session)
        if record is None:
            fail(f"session {session} has no worktree; `atomic-agent sandbox list` shows the ones that have")
        assert record is not None
        typer.echo(worktree_diff(record, stat=stat), nl=False)
    except WorktreeError as exc:
        fail(str(exc))


@sandbox_app.command("apply")
def sandbox_apply_command(ctx: typer.Context, session: str = typer.Argument(..., help="Session id.")) -> None:
    """Bring the session's worktree edits into the workspace, then remove the worktree."""
    from .session_worktree import WorktreeError, apply_worktree

    try:
        files = apply_worktree(_state_dir(ctx), session)
    except WorktreeError as exc:
        fail(str(exc))
        return
    typer.echo(f"applied {len(files)} changed file(s) to the workspace: {', '.join(files) or '(none)'}")


@sandbox_app.command("discard")
def sandbox_discard_command(ctx: typer.Context, session: str = typer.Argument(..., help="Session id.")) -> None:
    """Drop the session's worktree and its edits; the workspace is left as it is."""
    from .session_worktree import WorktreeError, discard_worktree

    try:
        files = discard_worktree(_state_dir(ctx), session)
    except WorktreeError as exc:
        fail(str(exc))
        return
    typer.echo(f"discarded the worktree and {len(files)} changed file(s): {', '.join(files) or '(none)'}")
