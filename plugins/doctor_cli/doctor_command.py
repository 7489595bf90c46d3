"""Print the findings of every state check; exit 1 when any is an error."""

from __future__ import annotations

from pathlib import Path

import typer

from atomic_agent.api import current_cli_state, fail, print_json, runs_without_config


@runs_without_config
def doctor_command(ctx: typer.Context,
                   as_json: bool = typer.Option(False, "--json", help="Print the findings as JSON."),
                   move: str = typer.Option("", "--move-aside", metavar="FILE",
                                            help="Rename a damaged database (e.g. sessions.sqlite) so the next "
                                                 "command starts a fresh one; nothing is deleted.")) -> None:
    """Check the state directory (config, every database, disk space) and what plugins report
    (e.g. the installed llama-server build); read-only."""
    import attrs  # the checks load when the command runs, not when --help lists it

    from .state_checks import ERROR, check_config, check_databases, check_state_dir, merge_findings, plugin_findings

    state = current_cli_state(ctx)
    if state.state_dir is None:
        fail("the state directory could not be resolved; pass --state-dir")
    assert state.state_dir is not None
    if move:
        _move_aside(state.state_dir, move)
        return
    findings = [*check_state_dir(state.state_dir), check_config(state.state_dir, state.boot_error),
                *check_databases(state.state_dir)] if state.state_dir.is_dir() else check_state_dir(state.state_dir)
    findings = merge_findings(findings, plugin_findings(state.host, state.state_dir, state.boot_context and state.boot_context.config))
    if as_json:
        print_json([attrs.asdict(f) for f in findings])
    else:
        for f in findings:
            typer.echo(f"{f.level:<6} {f.check:<18} {f.detail}")
            if f.advice:
                typer.echo(f"{'':<6} {'':<18} -> {f.advice}")
    if any(f.level == ERROR for f in findings):
        raise typer.Exit(1)


def _move_aside(state_dir: Path, name: str) -> None:
    from .sqlite_health import check_sqlite_file, move_aside, probe_directory

    if "/" in name or not name.endswith(".sqlite"):
        fail(f"--move-aside takes a database file name in the state dir, like sessions.sqlite; got {name!r}")
    health = check_sqlite_file(state_dir / name, probe_directory(state_dir))
    if health.state != "corrupt":
        fail(f"{health.path} is {health.state}, not damaged: refusing to move it ({health.detail})")
    try:
        moved = move_aside(health.path)
    except OSError as exc:
        fail(f"{health.path} is damaged but could not be renamed: {exc.strerror or exc} (errno {exc.errno}). The "
             f"directory {state_dir} must be writable to move a file aside; make it writable and run this again "
             "(nothing was changed)" if not list(state_dir.glob(f"{name}.corrupt-*")) else
             f"{health.path} could only be partly renamed: {exc}; what was renamed is listed by `ls {state_dir}`")
        return
    for path in moved:
        typer.echo(f"moved aside: {path}")
