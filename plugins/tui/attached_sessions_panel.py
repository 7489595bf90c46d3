"""The Sessions tab when the TUI is attached to `serve`: every session serve's runtime holds,
whichever channel started it (the chat API, Telegram, the scheduler, the CLI), with a marker
on the ones running a turn. Enter (or a second click) opens one in the chat, r reloads; the
list also reloads every few seconds while the tab is shown. Delete and export stay with the
in-process TUI and the `sessions` command."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from atomic_agent.api import TuiPanel
from atomic_agent.plugins.tui.mouse_interaction import RowList

REFRESH_S = 3.0


class AttachedSessionsPanel(Vertical):
    DEFAULT_CSS = """
    AttachedSessionsPanel RowList { height: 1fr; }
    AttachedSessionsPanel .hint { height: 1; color: $text-muted; padding: 0 1; }
    """
    BINDINGS = [Binding("o", "open", "open"), Binding("r", "reload", "reload")]

    def __init__(self, context: Any) -> None:
        super().__init__()
        self.context = context
        self.rows: list[dict[str, Any]] = []

    def compose(self) -> ComposeResult:
        yield Static("sessions in serve · Enter/o open · r reload · click a row, click again to open", classes="hint")
        yield RowList(id="sessions-table")

    def on_mount(self) -> None:
        self.query_one(RowList).add_columns("id", "started by", "title", "turns", "state", "updated")
        self.action_reload()
        self.set_interval(REFRESH_S, self._refresh_if_shown)

    def on_show(self) -> None:
        self.action_reload()

    def _refresh_if_shown(self) -> None:
        if self.display and self.is_on_screen:
            self.action_reload()

    def action_reload(self) -> None:
        self.run_worker(self._reload(), group="attached-sessions", exclusive=True, exit_on_error=False)

    async def _reload(self) -> None:
        try:
            rows = await self.context.orchestrator.sessions()
        except Exception as exc:
            self.context.notify(f"could not list serve's sessions: {type(exc).__name__}: {exc}", severity="error")
            return
        self.rows = rows
        table = self.query_one(RowList)
        cursor = table.cursor_row
        table.clear()
        for row in rows:
            table.add_row(str(row["id"])[:12], str(row.get("origin") or row.get("channel") or "?"), str(row.get("title") or "")[:40],
                          str(row.get("turns") or 0), "running" if row.get("busy") else str(row.get("status", "")),
                          str(row.get("updatedAt") or row.get("createdAt") or "")[:19], key=str(row["id"]))
        if rows:
            table.move_cursor(row=min(cursor, len(rows) - 1))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        key = self.query_one(RowList).selected_key()
        if key is None:
            self.context.notify("no session selected", severity="warning")
            return
        self.context.open_session(key)


def _build(context: Any) -> Any:
    return AttachedSessionsPanel(context)


ATTACHED_PANELS = (TuiPanel("sessions", "Sessions", _build, order=10, key="f2"),)
