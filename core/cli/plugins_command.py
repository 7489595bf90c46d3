"""`atomic-agent plugins [--json]`: what is installed and what became of it."""

from __future__ import annotations

import typer

from atomic_agent.cli.cli_state import current_cli_state
from atomic_agent.cli.output_format import print_json, print_table


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
