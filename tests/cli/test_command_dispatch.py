"""A command's start converts only that command to click; a mistyped one still gets the
whole command list's error and suggestion."""

from __future__ import annotations

from pathlib import Path

import typer

from atomic_agent.cli.main import keep_invoked_command
from tests.cli.run_cli import run_cli


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.command()
    def first_thing() -> None:
        """One."""

    @app.command("second")
    def second_impl() -> None:
        """Two."""

    group = typer.Typer()

    @group.command("inner")
    def inner() -> None:
        """Inner."""

    app.add_typer(group, name="grouped")
    return app


def _names(app: typer.Typer) -> list[str]:
    commands = [info.name or info.callback.__name__ for info in app.registered_commands]  # type: ignore[union-attr]
    return commands + [str(info.name) for info in app.registered_groups]


def test_start_keeps_only_the_invoked_command() -> None:
    for name, kept in (("first-thing", ["first_thing"]), ("second", ["second"]), ("grouped", ["grouped"])):
        app = _app()
        keep_invoked_command(app, name)
        assert _names(app) == kept


def test_a_name_that_matches_nothing_keeps_every_command() -> None:
    for name in ("secnd", None, "first_thing"):  # a typo, no command, the function's own spelling
        app = _app()
        keep_invoked_command(app, name)
        assert _names(app) == ["first_thing", "second", "grouped"]


def test_a_mistyped_command_is_still_told_the_real_one(tmp_path: Path) -> None:
    result = run_cli(["--state-dir", str(tmp_path), "rn"])
    assert result.returncode == 2
    assert "No such command 'rn'" in result.stderr and "Did you mean 'run'?" in result.stderr


def test_a_kept_group_still_dispatches_its_subcommands(tmp_path: Path) -> None:
    result = run_cli(["--state-dir", str(tmp_path), "config", "path"])
    assert result.returncode == 0, result.stderr
    assert str(tmp_path) in result.stdout
