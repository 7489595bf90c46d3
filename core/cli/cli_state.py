"""What every command can reach: the boot context (or the reason boot failed), a clean
failure exit, and the two ways a command reports data — human tables or JSON."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import attrs

if TYPE_CHECKING:  # kept out of the import graph of `--help` (typer, config, the runtime)
    import typer

    from atomic_agent.config.app_config import AppConfig
    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.plugin_host.plugin_host import PluginHost
    from atomic_agent.runtime.boot_context import BootContext


@attrs.define
class CliState:
    """Held in the click context; a failed boot is reported when a command needs config.

    `--help` builds the app without loading config (`deferred_boot`): should a command run
    after all (an option value that looked like `--help`), `require()` boots then."""

    host: PluginHost
    boot_context: BootContext | None
    boot_error: ConfigError | None
    state_dir: Path | None
    deferred_boot: Callable[[], BootContext] | None = None

    def require(self) -> BootContext:
        if self.boot_context is None and self.boot_error is None and self.deferred_boot is not None:
            from atomic_agent.config.config_errors import ConfigError

            try:
                self.boot_context = self.deferred_boot()
            except ConfigError as exc:
                self.boot_error = exc
        if self.boot_context is None:
            fail(str(self.boot_error) if self.boot_error else "atomic-agent did not boot")
        assert self.boot_context is not None
        return self.boot_context

    @property
    def config(self) -> AppConfig:
        return self.require().config


def current_cli_state(ctx: typer.Context) -> CliState:
    """The CliState of the command being run; commands take `ctx: typer.Context` for it."""
    state = ctx.find_object(CliState)
    if state is None:
        raise RuntimeError("atomic-agent CLI state is missing: run commands through atomic_agent.cli.main")
    return state


_RUNS_WITHOUT_CONFIG = "_atomic_agent_runs_without_config"
CommandT = TypeVar("CommandT", bound=Callable[..., Any])


def runs_without_config(command: CommandT) -> CommandT:
    """Mark a command that still runs when config.json is broken (it reports that itself,
    reading `CliState.boot_error`); every other command is refused before it starts."""
    setattr(command, _RUNS_WITHOUT_CONFIG, True)
    return command


def command_runs_without_config(app: Any, name: str | None) -> bool:
    """Whether the registered command `name` carries the `runs_without_config` mark."""
    import typer.main

    group = typer.main.get_command(app)
    command = getattr(group, "commands", {}).get(name) if name else None
    return bool(command is not None and getattr(command.callback, _RUNS_WITHOUT_CONFIG, False))


def fail(message: str, code: int = 2) -> NoReturn:
    """Print a one-paragraph error on stderr and exit non-zero (no traceback)."""
    import typer

    print(f"atomic-agent: {message}", file=sys.stderr)
    raise typer.Exit(code)


def print_json(data: Any) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain aligned table (no colour; pipes and terminals read it the same)."""
    cells = [[str(h) for h in headers]] + [[("" if c is None else str(c)) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    for n, row in enumerate(cells):
        print("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
        if n == 0:
            print("  ".join("-" * w for w in widths))
