"""The Sessions tab: every session, most recent first; open one in the chat, delete it
(with a confirm), or export it as JSON into the state dir's exports folder.

Keys: Enter or o opens, d deletes (asks first), e exports, r reloads. The orchestrator is the
only part that touches the runtime.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from atomic_agent.api import write_atomic
from atomic_agent.plugins.tui.confirm_modal import ConfirmModal
from atomic_agent.plugins.tui.mouse_interaction import RowList

EXPORT_DIR = "exports"


class SessionsOrchestrator:
    def __init__(self, context: Any) -> None:
        self.context = context
        self.runtime = context.runtime

    def rows(self) -> list[dict[str, Any]]:
        return list(self.runtime.sessions.list(limit=200))

    def delete(self, session_id: str) -> None:
        if self.runtime.turns.is_busy(session_id):
            raise RuntimeError(f"session {session_id} has a turn running; stop it before deleting")
        self.runtime.sessions.delete(session_id)

    def export(self, session_id: str) -> Path:
        entries = self.runtime.sessions.entries(session_id)
        state = self.runtime.sessions.load(session_id)
        data = {"id": session_id, "title": getattr(state, "title", ""), "status": getattr(state, "status", ""),
                "workingDir": str(getattr(state, "working_dir", "")),
                "entries": [attrs.asdict(e) if attrs.has(type(e)) else dict(vars(e)) for e in entries]}
        target = Path(self.runtime.state_dir) / EXPORT_DIR / f"session-{session_id}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(target, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", mode=0o600)
        return target


class SessionsPanel(Vertical):
    DEFAULT_CSS = """
    SessionsPanel RowList { height: 1fr; }
    SessionsPanel .hint { height: 1; color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [Binding("o", "open", "open"), Binding("d", "delete", "delete"), Binding("e", "export", "export"),
                Binding("r", "reload", "reload")]

    def __init__(self, context: Any) -> None:
        super().__init__()
        self.context = context
        self.orchestrator = SessionsOrchestrator(context)

    def compose(self) -> ComposeResult:
        yield Static("Enter/o open · d delete · e export · r reload · click a row, click again to open",
                     classes="hint")
        yield RowList(id="sessions-table")

    def on_mount(self) -> None:
        table = self.query_one(RowList)
        table.add_columns("id", "title", "turns", "status", "updated")
        self.action_reload()

    def on_show(self) -> None:
        self.action_reload()  # the tab shows what is true now (turns and grants change meanwhile)

    def action_reload(self) -> None:
        table = self.query_one(RowList)
        table.clear()
        try:
            rows = self.orchestrator.rows()
        except Exception as exc:
            self.context.notify(f"could not list sessions: {exc}", severity="error")
            return
        for row in rows:
            table.add_row(row["id"][:12], (row.get("title") or "")[:40], str(row.get("turns", "")),
                          str(row.get("status", "")), str(row.get("updated_at", ""))[:19], key=row["id"])

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def _selected(self) -> str | None:
        key = self.query_one(RowList).selected_key()
        if key is None:
            self.context.notify("no session selected", severity="warning")
        return key

    def action_open(self) -> None:
        key = self._selected()
        if key is not None and hasattr(self.context, "open_session"):
            self.context.open_session(key)

    def action_delete(self) -> None:
        key = self._selected()
        if key is None:
            return

        def answered(yes: bool | None) -> None:
            if not yes:
                return
            try:
                self.orchestrator.delete(key)
            except Exception as exc:
                self.context.notify(f"could not delete {key}: {exc}", severity="error")
                return
            self.context.notify(f"deleted session {key}")
            self.action_reload()

        self.app.push_screen(ConfirmModal(f"Delete session {key} and its transcript? This cannot be undone."),
                             answered)

    def action_export(self) -> None:
        key = self._selected()
        if key is None:
            return
        try:
            path = self.orchestrator.export(key)
        except Exception as exc:
            self.context.notify(f"could not export {key}: {exc}", severity="error")
            return
        self.context.notify(f"exported to {path}")
