"""Print `<state>/metrics.json` (totals of every runtime that closed here)."""

from __future__ import annotations

import sys

import typer

from atomic_agent.api import current_cli_state, fail, print_json

FORMATS = ("json", "prometheus")


def metrics_command(ctx: typer.Context,
                    fmt: str = typer.Option("json", "--format", "-f", help="json or prometheus."),
                    reset: bool = typer.Option(False, "--reset", help="Delete the saved totals afterwards.")) -> None:
    """Counters (reflection outcomes, recall hits, evictions, ...) and latency histograms."""
    from .metrics_file import MetricsFileError, clear_metrics, read_metrics
    from .prometheus_text import render_prometheus

    if fmt not in FORMATS:
        fail(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    state_dir = current_cli_state(ctx).require().state_dir
    try:
        snapshot = read_metrics(state_dir)
    except MetricsFileError as exc:
        fail(str(exc))
    if fmt == "json":
        print_json(snapshot)
    else:
        sys.stdout.write(render_prometheus(snapshot))
    if reset:
        clear_metrics(state_dir)
