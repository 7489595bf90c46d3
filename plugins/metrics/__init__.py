"""The `metrics` plugin: the `metrics` service (counters and histograms of one runtime,
which other plugins record into), its flush into `<state>/metrics.json` when the runtime
stops, and `atomic-agent metrics` to print the saved totals (JSON or Prometheus text).

Hookimpls only; the registry and the file code are imported on first use.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

from .metrics_contract import METRICS_SERVICE as SERVICE_NAME

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import RuntimeView, ServiceSpec


def _flush(registry: Any, state_dir: Any) -> None:
    from .metrics_file import flush_metrics

    try:
        flush_metrics(registry, state_dir)
    except Exception as exc:  # metrics are observability: never fail shutdown over them
        import sys

        print(f"atomic-agent: metrics were not saved: {type(exc).__name__}: {exc}", file=sys.stderr)


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    def build(runtime: RuntimeView) -> Any:
        from .metrics_registry import MetricsRegistry

        return MetricsRegistry()

    return [ServiceSpec(SERVICE_NAME, build, summary="counters and histograms of this runtime")]


@hookimpl
def runtime_stopping(runtime: RuntimeView) -> None:
    """Add what the runtime recorded to metrics.json. Plugins record before this (after-turn
    work has ended by now); a plugin recording in its own `runtime_stopping` that runs after
    this one (name order) is not saved."""
    _flush(runtime.service(SERVICE_NAME), runtime.state_dir)


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .metrics_command import metrics_command

    app.command("metrics", help="Print the saved metrics as JSON or Prometheus text.")(metrics_command)
