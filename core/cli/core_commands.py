"""The core's own commands: `atomic-agent plugins [--json]` (what is installed and what
became of it) and `atomic-agent config path|show|get KEY|set KEY VALUE`."""

from __future__ import annotations

import json

import typer

from atomic_agent.cli.cli_state import current_cli_state, fail, print_json, print_table


def plugins_command(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List every plugin: name, distribution and version, hooks implemented, status."""
    from atomic_agent.plugin_host.service_registry import ServiceRegistry

    host = current_cli_state(ctx).host
    ServiceRegistry(host)  # collecting the services reports a provider that raises or a name two provide
    reports = sorted(host.reports.values(), key=lambda r: (not r.essential, r.name))
    if json_out:
        print_json([r.to_json() for r in reports])
        return
    rows = []
    for r in reports:
        dist = f"{r.distribution} {r.version}".strip()
        status = r.status if not r.error else f"{r.status}: {r.error}"
        rows.append([r.name, dist, ", ".join(r.hooks), status])
    print_table(["name", "distribution", "hooks", "status"], rows)


config_app = typer.Typer(no_args_is_help=True)


@config_app.command("path")
def config_path_command(ctx: typer.Context) -> None:
    """Print the path of config.json."""
    from atomic_agent.config.raw_config import config_path
    from atomic_agent.config.state_dir import resolve_state_dir

    state = current_cli_state(ctx)
    print(config_path(state.state_dir or resolve_state_dir()))


@config_app.command("show")
def config_show_command(ctx: typer.Context) -> None:
    """Print the effective config (file values, defaults and env overrides) as JSON."""
    from atomic_agent.config.config_file import render_config

    cfg = current_cli_state(ctx).config
    print(render_config(cfg.version, cfg.blocks, cfg.unknown_blocks), end="")


@config_app.command("get")
def config_get_command(ctx: typer.Context, key: str) -> None:
    """Print one value, e.g. `agent.approvalLevel`."""
    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.config.config_file import get_key, render_config

    cfg = current_cli_state(ctx).config
    effective = json.loads(render_config(cfg.version, cfg.blocks, cfg.unknown_blocks))
    try:
        value = get_key(effective, key)
    except ConfigError as exc:
        fail(str(exc))
    print_json(value) if isinstance(value, (dict, list)) else print(json.dumps(value) if not isinstance(value, str) else value)


@config_app.command("set")
def config_set_command(ctx: typer.Context, key: str, value: str) -> None:
    """Set one value (VALUE is parsed as JSON when it can be) and validate the whole file."""
    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.config.config_file import parse_value, save_raw_config, set_key
    from atomic_agent.config.raw_config import read_raw_config

    boot = current_cli_state(ctx).require()
    try:
        raw = read_raw_config(boot.config.path)
        save_raw_config(boot.config.path, set_key(raw, key, parse_value(value)), boot.config_blocks)
    except ConfigError as exc:
        fail(str(exc))
    print(f"{key} = {value}")
