"""The TUI's own tabs as `TuiPanel` records (Sessions, Tools, Privacy, Logs); each builder
imports its widget only when the app builds it."""

from __future__ import annotations

from typing import Any

from atomic_agent.api import TuiPanel


def _sessions(context: Any) -> Any:
    from atomic_agent.plugins.tui.sessions_panel import SessionsPanel

    return SessionsPanel(context)


def _tools(context: Any) -> Any:
    from atomic_agent.plugins.tui.tools_panel import ToolsPanel

    return ToolsPanel(context)


def _privacy(context: Any) -> Any:
    from atomic_agent.plugins.tui.privacy_panel import PrivacyPanel

    return PrivacyPanel(context)


def _logs(context: Any) -> Any:
    from atomic_agent.plugins.tui.logs_panel import LogsPanel

    return LogsPanel(context)


CORE_PANELS = (
    TuiPanel("sessions", "Sessions", _sessions, order=10, key="f2"),
    TuiPanel("tools", "Tools", _tools, order=20, key="f3"),
    TuiPanel("privacy", "Privacy", _privacy, order=30, key="f4"),
    TuiPanel("logs", "Logs", _logs, order=90, key="f5"),
)
