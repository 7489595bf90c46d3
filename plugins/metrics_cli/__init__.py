"""`atomic-agent metrics`: the counters and histograms runtimes saved in this state dir."""

from __future__ import annotations

from typing import Any

from atomic_agent.api import hookimpl


@hookimpl
def register_commands(app: Any) -> None:
    from .metrics_command import metrics_command

    app.command("metrics", help="Print the saved metrics as JSON or Prometheus text.")(metrics_command)
