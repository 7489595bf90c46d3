"""The `tasks` service and the `report_sink` services it delivers task reports to, as other
plugins see them: their names and what a sink implements (see
plugins/metrics/metrics_contract.py for what a contract module may hold).
"""

from __future__ import annotations

from typing import Protocol

TASKS_SERVICE = "tasks"
REPORT_SINK = "report_sink"  # a sink-style service: every provider (ServiceSpec(multiple=True)) gets each report


class ReportSink(Protocol):
    """What a `report_sink` provider implements; raising says the report was not sent, and why."""

    async def send_report(self, target: str, text: str) -> object: ...
