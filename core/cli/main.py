"""Entry point of `atomic-agent`: boot, compose the typer app from plugins, run it."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from atomic_agent import __version__

if TYPE_CHECKING:
    import typer

    from atomic_agent.cli.cli_state import CliState
    from atomic_agent.plugin_host.plugin_host import PluginHost


def _pre_parse_state_dir(argv: Sequence[str]) -> str | None:
    """--state-dir must be known before plugins load (config decides which ones do)."""
    for i, arg in enumerate(argv):
        if arg == "--state-dir" and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--state-dir="):
            return arg.split("=", 1)[1]
        if arg == "--":
            break
    return None


def build_app(state: object) -> typer.Typer:
    import typer

    from atomic_agent.cli.approvals_commands import approvals_app
    from atomic_agent.cli.core_commands import config_app, plugins_command

    app = typer.Typer(name="atomic-agent", no_args_is_help=True, add_completion=False,
                      help="A local operator agent runtime: llama-server, tools, approvals, memory.",
                      context_settings={"obj": state, "help_option_names": ["-h", "--help"]},
                      pretty_exceptions_enable=False, rich_markup_mode=None)

    @app.callback()
    def root(
        state_dir: str = typer.Option(None, "--state-dir", help="State directory (default: $ATOMIC_AGENT_STATE_DIR or the user data dir)."),
        version: bool = typer.Option(False, "--version", help="Print the version and exit.", is_eager=True),
    ) -> None:
        """atomic-agent: a local operator agent runtime."""
        if version:
            print(f"atomic-agent {__version__}")
            raise typer.Exit(0)

    app.command("plugins", help="List every plugin: name, distribution, hooks, status.")(plugins_command)
    app.add_typer(config_app, name="config", help="Show and change config.json.")
    app.add_typer(approvals_app, name="approvals", help="List, show and answer durable approvals and questions.")
    add_plugin_commands(state.host, app)  # type: ignore[attr-defined]
    return app


def add_plugin_commands(host: PluginHost, app: typer.Typer) -> None:
    """Each plugin's `register_commands`, isolated: one that raises is reported (stderr and
    its `plugins` row) and loses the commands it added; the rest of the CLI stands. A command
    name two plugins add is kept from the built-in one (else the first by name) and the
    clash is shown on the other's `plugins` row."""
    from atomic_agent.plugin_host.collect_registrations import built_in_first, call_each, report_conflict

    added: list[tuple[str, object]] = []  # (plugin, CommandInfo or TyperInfo), in registration order
    seen = {"commands": len(app.registered_commands), "groups": len(app.registered_groups)}

    def checkpoint() -> Callable[[], None]:
        commands, groups = len(app.registered_commands), len(app.registered_groups)

        def rollback() -> None:
            del app.registered_commands[commands:]
            del app.registered_groups[groups:]

        return rollback

    def collect(plugin: str) -> None:
        added.extend((plugin, info) for info in app.registered_commands[seen["commands"]:])
        added.extend((plugin, info) for info in app.registered_groups[seen["groups"]:])
        seen["commands"], seen["groups"] = len(app.registered_commands), len(app.registered_groups)

    taken = {_command_name(info) for info in [*app.registered_commands, *app.registered_groups]}
    call_each(host, "register_commands", undo=checkpoint, after=collect, app=app)
    owner: dict[str, str] = {}
    for plugin, info in sorted(added, key=lambda pair: built_in_first(host, pair[0])):
        name = _command_name(info)
        if name in taken or name in owner:
            report_conflict(host, plugin, f"command {name!r} is also added by "
                            f"{'the core' if name in taken else 'plugin ' + repr(owner[name])}, whose one is used")
            if info in app.registered_commands:
                app.registered_commands.remove(info)  # type: ignore[arg-type]
            else:
                app.registered_groups.remove(info)  # type: ignore[arg-type]
            continue
        owner[name] = plugin


def _command_name(info: object) -> str:
    """The name typer gives a registered command or group (its explicit name, else derived)."""
    name = getattr(info, "name", None)
    if name:
        return str(name)
    callback = getattr(info, "callback", None)
    if callback is not None:
        return str(callback.__name__).lower().replace("_", "-")
    instance = getattr(info, "typer_instance", None)
    return str(getattr(getattr(instance, "info", None), "name", "") or "")


def main(argv: Sequence[str] | None = None) -> None:
    """The program (`argv` None: `sys.argv`, and the start-up runs with the cyclic garbage
    collector off, see `start_up_without_gc`), or one command line given by a caller."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["--version"]:
        print(f"atomic-agent {__version__}")
        return
    with start_up_without_gc(argv is None):
        app, state = compose(args)
    try:
        app(args=args, prog_name="atomic-agent")
    except Exception as exc:  # a damaged, full or read-only state dir is explained, never a traceback
        from atomic_agent.reliability.failure_taxonomy import explain_environment_error

        message = explain_environment_error(exc, state.state_dir)
        if message is None:
            raise
        print(message, file=sys.stderr)
        sys.exit(1)


@contextlib.contextmanager
def start_up_without_gc(enabled: bool) -> Iterator[None]:
    """Start-up makes tens of thousands of objects that live as long as the process (modules,
    classes, plugin records, config); the cyclic collector, run every 700 allocations, kept
    walking them while they were made — about 20 ms of a `run` before its first request. With
    `enabled` (the program, not a caller's test) it is off until start-up ends; then what
    start-up made is frozen out of every later collection (gc.freeze, which keeps its few
    thousand leftovers too, once) and the collector runs as usual for the command."""
    if not enabled or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def compose(args: Sequence[str]) -> tuple[typer.Typer, CliState]:
    """The typer app for `args` and the CLI state its commands get: booted from the state dir
    (config, plugins), or, for a help screen, the plugins alone. A config error ends the
    process here unless the command runs without config (then it gets the error to report)."""
    from atomic_agent.cli.cli_state import CliState, command_runs_without_config
    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.plugin_host.plugin_host import build_plugin_host

    state_dir = _pre_parse_state_dir(args)
    if _is_help(args):
        state = help_state(state_dir)
        return build_app(state), state
    from atomic_agent.runtime.boot_context import boot

    try:
        ctx = boot(state_dir)
        state = CliState(host=ctx.host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir)
    except ConfigError as exc:
        state = CliState(host=build_plugin_host(), boot_context=None, boot_error=exc,
                         state_dir=_resolved_or_none(state_dir))
    app = build_app(state)
    keep_invoked_command(app, _command_of(args))
    if state.boot_error is not None and not command_runs_without_config(app, _command_of(args)):
        print(f"atomic-agent: {state.boot_error}", file=sys.stderr)
        sys.exit(2)
    return app, state


def keep_invoked_command(app: typer.Typer, name: str | None) -> None:
    """Keep only the command (or group) `name` names, when exactly one does.

    Typer turns every registered command into a click command, reading each signature and
    its type hints, before it dispatches one: about 10 ms of every start with all the
    plugins' commands. Dispatch needs only the invoked one. A name that matches nothing (a
    typo) keeps the whole app, so click's error lists and suggests the real commands."""
    from typer.main import get_command_name

    if name is None:
        return
    commands = [info for info in app.registered_commands
                if (info.name or get_command_name(info.callback.__name__)) == name]  # type: ignore[union-attr]
    groups = [info for info in app.registered_groups if info.name == name]
    if len(commands) + len(groups) == 1:
        app.registered_commands[:] = commands
        app.registered_groups[:] = groups


def help_state(state_dir: str | None) -> CliState:
    """What `--help` needs: the plugins (their `register_commands` add the commands), chosen
    as a boot would choose them, without loading config or creating the state dir. A
    config that cannot be read only loses `plugins.disabled` here; the commands report it."""
    import os

    from atomic_agent.cli.cli_state import CliState
    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.config.raw_config import config_path, read_raw_config
    from atomic_agent.plugin_host.plugin_host import build_plugin_host

    resolved = _resolved_or_none(state_dir)
    disabled: list[str] = []
    env: dict[str, str] = dict(os.environ)
    if resolved is not None and resolved.is_dir():
        from atomic_agent.config.dotenv_file import load_dotenv

        load_dotenv(resolved / ".env", env)  # it may choose plugins (ATOMIC_AGENT_PLUGINS), as a boot reads it
        try:
            listed = (read_raw_config(config_path(resolved)).get("plugins") or {})
            listed = listed.get("disabled", []) if isinstance(listed, dict) else []
            disabled = [name for name in listed if isinstance(name, str)] if isinstance(listed, list) else []
        except ConfigError:
            pass

    def boot_now() -> object:
        from atomic_agent.runtime.boot_context import boot

        return boot(state_dir, host=state.host)

    state = CliState(host=build_plugin_host(disabled=disabled, environ=env), boot_context=None, boot_error=None,
                     state_dir=resolved, deferred_boot=boot_now)  # type: ignore[arg-type]
    return state


def _command_of(args: Sequence[str]) -> str | None:
    """The first positional argument (the command), skipping --state-dir and its value."""
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg == "--state-dir":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def _resolved_or_none(state_dir: str | None) -> Path | None:
    import os

    from atomic_agent.config.state_dir import resolve_state_dir

    try:
        return resolve_state_dir(state_dir, os.environ)
    except Exception:  # doctor then says the state dir could not be resolved
        return None


def _is_help(args: Sequence[str]) -> bool:
    """No arguments, or -h/--help before any `--` (after it, they are values)."""
    before = args[: args.index("--")] if "--" in args else args
    return not args or "--help" in before or "-h" in before


if __name__ == "__main__":
    main()
