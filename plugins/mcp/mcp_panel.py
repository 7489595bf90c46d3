"""The TUI's MCP panel: the configured servers with their status, add by pasted JSON, remove
with a confirmation, and re-approval of tools that drifted since they were accepted.

Imported only by the plugin's `TuiPanel.build`, so Textual loads only when the TUI runs.
Keys on the list: Enter shows a server's details, n adds (paste JSON), d removes (y/n),
a approves the drifted tools of the selected server, r reconnects or refetches its catalog,
R reloads the list. Mouse: the first click on a row selects it, a second click on the
selected row does what Enter does (it is routed through the same binding).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, DataTable, Label, Static, TextArea

from .mcp_errors import McpError
from .mcp_panel_orchestrator import McpPanelOrchestrator
from .pasted_config import PastedConfigError

ADD_HINT = ('Paste one server or a client config, e.g. {"mcpServers": {"files": {"command": "npx", "args": '
            '["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}}} or {"name": "docs", "url": '
            '"https://example.com/mcp"}. Ctrl+S adds, Esc cancels.')


class AddServerScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("ctrl+s", "submit", "Add"), Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="mcp-add"):
            yield Label(ADD_HINT, markup=False)
            yield TextArea(id="mcp-add-json")
            with Horizontal():
                yield Button("Add", id="mcp-add-submit", variant="primary")
                yield Button("Cancel", id="mcp-add-cancel")

    def action_submit(self) -> None:
        self.dismiss(self.query_one(TextArea).text)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "mcp-add-submit":
            self.action_submit()
        else:
            self.action_cancel()


class ConfirmRemoveScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y,enter", "answer(True)", "Remove"), Binding("n,escape", "answer(False)", "Keep")]

    def __init__(self, name: str) -> None:
        super().__init__()
        self.server = name

    def compose(self) -> ComposeResult:
        with Vertical(id="mcp-remove"):
            yield Label(f"Remove MCP server {self.server!r} from config.json and disconnect it? (y/n)", markup=False)
            with Horizontal():
                yield Button("Remove", id="mcp-remove-yes", variant="error")
                yield Button("Keep", id="mcp-remove-no")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "mcp-remove-yes")


class McpPanel(Widget):
    BINDINGS = [Binding("n", "add", "Add server"), Binding("d", "remove", "Remove"),
                Binding("a", "approve", "Approve drift"), Binding("r", "refresh_server", "Reconnect"),
                Binding("R", "reload", "Reload list")]
    DEFAULT_CSS = "McpPanel { height: 1fr; } McpPanel #mcp-servers { height: 1fr; } McpPanel #mcp-detail { height: auto; }"

    def __init__(self, context: Any) -> None:
        super().__init__(id="mcp-panel")
        self.context = context
        self.orchestrator = McpPanelOrchestrator(context.runtime)
        self.busy = False  # one add/remove/approve at a time: a second key press while one runs is ignored

    def compose(self) -> ComposeResult:
        table = self.context.rows(id="mcp-servers")
        table.add_columns("server", "status", "transport", "trust", "tools", "drifted")
        yield table
        yield Static("", id="mcp-detail", markup=False)

    def on_mount(self) -> None:
        self.action_reload()
        # a server that drops or reconnects by itself shows at once, without pressing R
        self._unsubscribe = self.orchestrator.on_change(self._changed)

    def on_unmount(self) -> None:
        self._unsubscribe()

    def _changed(self) -> None:
        self.call_later(self.action_reload)

    # -- list ------------------------------------------------------------------------------
    def selected(self) -> str | None:
        table = self.query_one("#mcp-servers", DataTable)
        if table.row_count == 0:
            return None
        return table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value

    def action_reload(self) -> None:
        table = self.query_one("#mcp-servers", DataTable)
        keep = self.selected()
        table.clear()
        rows = self.orchestrator.rows()
        for row in rows:
            cells = (row.name, row.status, row.transport, row.trust, str(row.tools), str(row.drifted or "-"))
            table.add_row(*(Text(c) for c in cells), key=row.name)  # Text: names and errors are never markup
        names = [r.name for r in rows]
        if keep in names:
            table.move_cursor(row=names.index(keep))
        detail = self.query_one("#mcp-detail", Static)
        if not rows:
            detail.update("No MCP servers configured. Press n to add one by pasting its JSON.")
        elif self.selected() is not None:
            detail.update(self.orchestrator.detail(self.selected() or ""))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        name = event.row_key.value
        if name is not None:
            self.query_one("#mcp-detail", Static).update(self.orchestrator.detail(name))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()

    # -- actions ---------------------------------------------------------------------------
    def action_add(self) -> None:
        if not self.busy:
            self.app.push_screen(AddServerScreen(), self._added)

    def _added(self, text: str | None) -> None:
        if text is None:
            return
        if not text.strip():
            self.context.notify("Nothing was pasted; paste the server's JSON and press Ctrl+S.", severity="warning")
            return
        try:
            servers = self.orchestrator.parse(text)
        except PastedConfigError as exc:
            self.context.notify(f"Cannot add the MCP server: {exc}", severity="error")
            return
        names = ", ".join(s.name for s in servers)

        async def job() -> None:
            try:
                statuses = await self.orchestrator.add(servers)
            except (ValueError, RuntimeError) as exc:  # a duplicate name, a config the file cannot take
                self.context.notify(f"Cannot add {names}: {exc}", severity="error")
                return
            finally:
                self.busy = False
                self.action_reload()
            for status in statuses:
                if status.status == "up":
                    self.context.notify(f"{status.name}: up, {len(status.tools)} tool(s) accepted")
                else:
                    self.context.notify(f"{status.name} is {status.status}: {status.last_error or 'not connected'} "
                                        "(kept in config.json; fix it and press r, or remove it with d)",
                                        severity="warning")

        self.busy = True
        self.context.run_job(f"Adding MCP server {names}", job)

    def action_remove(self) -> None:
        name = self.selected()
        if name is None:
            self.context.notify("No MCP server is selected.", severity="warning")
            return
        if not self.busy:
            self.app.push_screen(ConfirmRemoveScreen(name), lambda yes: self._removed(name, bool(yes)))

    def _removed(self, name: str, confirmed: bool) -> None:
        if not confirmed:
            return

        async def job() -> None:
            try:
                removed = await self.orchestrator.remove(name)
            finally:
                self.busy = False
                self.action_reload()
            self.context.notify(f"Removed {name}." if removed else f"{name} was not configured any more.")

        self.busy = True
        self.context.run_job(f"Removing MCP server {name}", job)

    def action_approve(self) -> None:
        name = self.selected()
        if name is None:
            self.context.notify("No MCP server is selected.", severity="warning")
            return
        if not self.orchestrator.drifted(name):
            self.context.notify(f"{name} has no new or changed tools waiting for approval.")
            return
        if self.busy:
            return

        async def job() -> None:
            try:
                approved = await self.orchestrator.approve(name)
            except (KeyError, RuntimeError, McpError) as exc:
                self.context.notify(f"Cannot approve {name}'s tools: {_reason(exc)}", severity="error")
                return
            finally:
                self.busy = False
                self.action_reload()
            self.context.notify(f"Approved {len(approved)} tool definition(s) of {name}.")

        self.busy = True
        self.context.run_job(f"Approving {name}'s tools", job)

    def action_refresh_server(self) -> None:
        name = self.selected()
        if name is None:
            self.context.notify("No MCP server is selected.", severity="warning")
            return

        async def job() -> None:
            try:
                status = await self.orchestrator.refresh(name)
            except (KeyError, RuntimeError, McpError) as exc:
                self.context.notify(f"Cannot refresh {name}: {_reason(exc)}", severity="error")
                return
            finally:
                self.action_reload()
            self.context.notify(f"{name}: {status.status}, {len(status.tools)} tool(s)")

        self.context.run_job(f"Refreshing MCP server {name}", job)


def _reason(exc: Exception) -> str:
    # a KeyError's str() is the repr of its message; the message itself reads better
    return str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)


def build_mcp_panel(context: Any) -> Widget:
    return McpPanel(context)
