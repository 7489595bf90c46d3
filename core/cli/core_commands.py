"""The core's own commands: `atomic-agent plugins [--json]` (what is installed and what
became of it) and `atomic-agent config path|show|get KEY|set KEY VALUE|unset KEY`.

config.json keeps only what the user set; every other value is the running build's
default, so a default changed by a later release reaches everyone who did not choose."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from atomic_agent.cli.cli_state import CliState, current_cli_state, fail, print_json, print_table


def plugins_command(ctx: typer.Context, json_out: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """List every plugin: name, distribution and version, hooks implemented, status."""

    state = current_cli_state(ctx)
    host = state.host
    _collect_registrations(state)  # reports what raises and every name two plugins register
    reports = sorted(host.reports.values(), key=lambda r: (not r.essential, r.name))
    if json_out:
        print_json([r.to_json() for r in reports])
        return
    rows = []
    for r in reports:
        dist = f"{r.distribution} {r.version}".strip()
        status = r.status if not r.error else f"{r.status}: {r.error}"
        status += "".join(f"; conflict: {c}" for c in r.conflicts)
        rows.append([r.name, dist, ", ".join(r.hooks), status])
    print_table(["name", "distribution", "hooks", "status"], rows)


def _collect_registrations(state: CliState) -> None:
    """Build (never start) a runtime: its construction collects every registration hook, which
    records failures and name clashes on the plugins' rows. Without a config that boots, the
    services are still collected (their clashes and failures reported)."""
    import asyncio

    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.plugin_host.service_registry import ServiceRegistry
    from atomic_agent.runtime.runtime import Runtime

    boot = state.boot_context
    if boot is None and state.boot_error is None and state.deferred_boot is not None:
        try:
            boot = state.boot_context = state.deferred_boot()
        except ConfigError as exc:
            state.boot_error = exc
    if boot is None:
        ServiceRegistry(state.host)
        return
    asyncio.run(Runtime(boot).close())


config_app = typer.Typer(no_args_is_help=True)


@config_app.command("path")
def config_path_command(ctx: typer.Context) -> None:
    """Print the path of config.json."""
    from atomic_agent.config.raw_config import config_path
    from atomic_agent.config.state_dir import resolve_state_dir

    state = current_cli_state(ctx)
    print(config_path(state.state_dir or resolve_state_dir()))


@config_app.command("show")
def config_show_command(ctx: typer.Context,
                        json_out: bool = typer.Option(False, "--json", help="Print JSON: key, value, source.")) -> None:
    """Print every effective value and where it comes from: `user` (config.json), `env`
    (an ATOMIC_AGENT_* variable) or `default` (this build's; follows future releases)."""
    from atomic_agent.config.config_sources import config_values

    values = config_values(current_cli_state(ctx).config)
    if json_out:
        print_json([v.to_json() for v in values])
        return
    print_table(["key", "value", "source"], [[v.key, json.dumps(v.value, ensure_ascii=False), v.source]
                                             for v in values])


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
    """Set one value (VALUE is parsed as JSON when it can be) and validate the whole file.
    Only what you set is stored; `config unset KEY` returns a key to the default."""
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
    _owner_warnings(ctx, key)


def _owner_warnings(ctx: typer.Context, key: str) -> None:
    """What the doctor check of the plugin owning KEY's block says now, warnings only: a value
    that validates can still make the feature unusable (a webhook endpoint without a
    credential refuses every call)."""
    state = current_cli_state(ctx)
    block = state.require().config_blocks.get(key.split(".", 1)[0])
    if block is None or not block.plugin or state.host is None or state.state_dir is None:
        return
    impls = [i for i in state.host.pm.hook.report_doctor_findings.get_hookimpls() if i.plugin_name == block.plugin]
    for impl in impls:
        try:
            given = {"state_dir": state.state_dir, "plugin_host": state.host, "config": state.require().config}
            answer: Any = impl.function(**{arg: given[arg] for arg in impl.argnames})
            findings = list(answer or ())
        except Exception as exc:
            print(f"warning: the {block.plugin} plugin's check raised {type(exc).__name__}: {exc}", file=sys.stderr)
            continue
        for finding in findings:
            if getattr(finding, "level", "ok") != "ok":
                advice = f" ({finding.advice})" if finding.advice else ""
                print(f"warning: {finding.check}: {finding.detail}{advice}", file=sys.stderr)


@config_app.command("unset")
def config_unset_command(ctx: typer.Context, key: str) -> None:
    """Remove KEY (BLOCK.FIELD, or a whole BLOCK) from config.json so it follows the default again."""
    from atomic_agent.config.config_errors import ConfigError
    from atomic_agent.config.config_file import get_key, render_config, save_raw_config, unset_key
    from atomic_agent.config.raw_config import read_raw_config

    boot = current_cli_state(ctx).require()
    cfg = boot.config
    defaults = json.loads(render_config(cfg.version, {k: type(b)() for k, b in cfg.blocks.items()}, {}))
    try:
        raw = read_raw_config(cfg.path)
        if not unset_key(raw, key):
            get_key({**defaults, **cfg.unknown_blocks}, key)  # a key nobody knows is an error, not a no-op
            print(f"{key} is not set in {cfg.path}; it already follows the default")
            return
        save_raw_config(cfg.path, raw, boot.config_blocks)
    except ConfigError as exc:
        fail(str(exc))
    try:
        print(f"{key} unset; default: {json.dumps(get_key(defaults, key), ensure_ascii=False)}")
    except ConfigError:
        print(f"{key} unset")  # a block no loaded plugin owns has no default to show
