"""The TUI's Memory panel: a read-only look at what the agent remembers.

Four channels: profile (Enter shows a fact's history), notes (Enter shows the note and its
links), links (Enter shows both ends), status (the memory phases' switches and hybrid
recall's embedding coverage). Keys: [ and ] or 1-4 switch channel, Enter shows the row,
r reloads, e (status channel) re-embeds every note with the current embedding model over a
progress bar counting the notes. There is deliberately no key that changes what is
remembered (re-embedding rebuilds derived vectors only). Mouse: the first click on a row
selects it, a second click on the selected row does what Enter does (the same binding).
Imported only by the plugin's `TuiPanel.build`, so Textual loads only when the TUI runs.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import DataTable, ProgressBar, Static

from .memory_errors import MemoryStoreError
from .memory_panel_orchestrator import CHANNELS, COLUMNS, MemoryPanelOrchestrator


class MemoryPanel(Widget):
    BINDINGS = [Binding("]", "channel(1)", "Next channel"), Binding("[", "channel(-1)", "Previous channel"),
                *(Binding(str(i + 1), f"jump({i})", name.title(), show=False) for i, name in enumerate(CHANNELS)),
                Binding("g", "graph", "Linked notes"), Binding("e", "reembed", "Re-embed notes"),
                Binding("r", "reload", "Reload")]
    DEFAULT_CSS = ("MemoryPanel { height: 1fr; } MemoryPanel #memory-rows { height: 1fr; } "
                   "MemoryPanel #memory-detail { height: auto; } MemoryPanel #memory-progress { display: none; } "
                   "MemoryPanel #memory-progress.working { display: block; }")

    def __init__(self, context: Any) -> None:
        super().__init__(id="memory-panel")
        self.context = context
        self.orchestrator = MemoryPanelOrchestrator(context.runtime)
        self.channel = CHANNELS[0]
        self.graph: list[int] | None = None  # notes shown as one note's link neighbourhood (g), or all
        self.reembedding = False  # one re-embed at a time

    def compose(self) -> ComposeResult:
        yield Static("", id="memory-channels", markup=False)
        yield self.context.rows(id="memory-rows")
        yield ProgressBar(id="memory-progress", show_eta=True)
        yield Static("", id="memory-detail", markup=False)

    def on_mount(self) -> None:
        self.action_reload()

    def _show(self, text: str) -> None:
        self.query_one("#memory-detail", Static).update(text)

    def action_channel(self, step: int) -> None:
        self.action_jump((CHANNELS.index(self.channel) + step) % len(CHANNELS))

    def action_jump(self, index: int) -> None:
        self.channel = CHANNELS[index]
        self.graph = None
        self._show("")
        self.action_reload()

    def action_reload(self) -> None:
        tabs = "  ".join(f"[{i + 1} {c}]" if c == self.channel else f" {i + 1} {c} " for i, c in enumerate(CHANNELS))
        scope = f"   notes linked to #{self.graph[0]} (g: all notes)" if self.graph else ""
        self.query_one("#memory-channels", Static).update(f"{tabs}   (read-only; [ ] switch){scope}")
        table = self.query_one("#memory-rows", DataTable)
        table.clear(columns=True)
        table.add_columns(*COLUMNS[self.channel])
        try:
            rows = self.orchestrator.rows(self.channel, self.graph if self.channel == "notes" else None)
        except MemoryStoreError as exc:
            self.context.notify(f"Memory cannot be read: {exc}", severity="error")
            self._show(f"memory.sqlite cannot be read: {exc}")
            return
        for row in rows:
            table.add_row(*(Text(c) for c in row.cells), key=row.key)  # Text: remembered text is never markup
        if not rows:
            self._show(self.orchestrator.empty_hint(self.channel))

    def action_graph(self) -> None:
        """On a note: list only it and the notes its links reach (Enter opens one); again: all notes."""
        if self.channel != "notes":
            self.context.notify("g shows a note's linked notes; switch to notes (2) first.")
            return
        if self.graph is not None:
            self.graph = None
            self.action_reload()
            return
        table = self.query_one("#memory-rows", DataTable)
        if table.row_count == 0:
            return
        note_id = int(table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value or 0)
        try:
            self.graph = self.orchestrator.neighbourhood(note_id)
        except MemoryStoreError as exc:
            self.context.notify(f"Memory cannot be read: {exc}", severity="error")
            return
        if len(self.graph) == 1:
            self.context.notify(f"Note #{note_id} has no links.")
        self.action_reload()

    def action_reembed(self) -> None:
        """On the status channel: embed every note again (after a model change), counting notes
        on the progress bar; the coverage row updates when it ends."""
        if self.channel != "status":
            self.context.notify("e re-embeds the notes from the status channel (4).")
            return
        if self.reembedding:
            self.context.notify("Re-embedding is already running.", severity="warning")
            return
        refusal = self.orchestrator.reembed_refusal()
        if refusal is not None:
            self.context.notify(refusal, severity="warning")
            return
        bar = self.query_one("#memory-progress", ProgressBar)
        bar.update(total=None, progress=0)
        bar.add_class("working")

        def progress(done: int, total: int) -> None:  # on the app's loop, after each batch
            bar.update(total=total, progress=done)

        async def job() -> None:
            from atomic_agent.api import EmbeddingUnavailable

            try:
                said = await self.orchestrator.reembed(progress)
            except (ValueError, EmbeddingUnavailable, MemoryStoreError) as exc:
                self.context.notify(f"Re-embedding did not run: {exc}", severity="error")
                return
            finally:
                self.reembedding = False
                bar.remove_class("working")
                self.action_reload()
            self.context.notify(said)

        self.reembedding = True
        self.context.run_job("Re-embedding memory notes", job)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        key = event.row_key.value
        if key is None:
            return
        try:
            self._show(self.orchestrator.detail(self.channel, key))
        except MemoryStoreError as exc:
            self.context.notify(f"Memory cannot be read: {exc}", severity="error")


def build_memory_panel(context: Any) -> Widget:
    return MemoryPanel(context)
