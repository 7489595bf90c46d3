"""The Logs tab: the managed llama-server's log (its tail, followed while the tab is shown)
and what the app saw from the runtime (turn events, notices, job failures)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import RichLog, Static

# where the llama_server plugin keeps its log (`atomic-agent llama logs` prints the same file)
LLAMA_LOG = Path("llamacpp") / "llama-server.log"
TAIL_BYTES = 64 * 1024
POLL_S = 2.0


def log_tail(path: Path, max_bytes: int = TAIL_BYTES) -> tuple[list[str], int]:
    """The last lines of `path` and its size ([] and 0 when it does not exist)."""
    try:
        with path.open("rb") as handle:
            size = handle.seek(0, 2)
            handle.seek(max(size - max_bytes, 0))
            data = handle.read()
    except FileNotFoundError:
        return [], 0
    lines = data.decode("utf-8", "replace").splitlines()
    return (lines[1:] if size > max_bytes else lines), size


class LogsPanel(Vertical):
    DEFAULT_CSS = """
    LogsPanel RichLog { height: 1fr; border-top: solid $accent; }
    LogsPanel .hint { height: 1; color: $text-muted; padding: 0 1; }
    """

    def __init__(self, context: Any) -> None:
        super().__init__()
        self.context = context
        self.log_path = Path(context.runtime.state_dir) / LLAMA_LOG
        self._log_size = -1

    def compose(self) -> ComposeResult:
        yield Static(f"llama-server log ({self.log_path})", classes="hint", markup=False)
        yield RichLog(id="llama-log", markup=False, max_lines=1000, wrap=True)
        yield Static("runtime events and notices", classes="hint")
        yield RichLog(id="event-log", markup=False, max_lines=2000, wrap=True)

    def on_mount(self) -> None:
        events = self.query_one("#event-log", RichLog)
        log = getattr(self.context, "event_log", None)
        if log is not None:
            for entry in list(log.entries)[-500:]:
                events.write(f"{entry.source}: {entry.text}")
            log.listeners.append(lambda entry: events.write(f"{entry.source}: {entry.text}"))
        self.poll_llama_log()
        self.set_interval(POLL_S, self.poll_llama_log)

    def poll_llama_log(self) -> None:
        if not self.is_on_screen and self._log_size >= 0:
            return  # a hidden tab does not read the disk
        lines, size = log_tail(self.log_path)
        if size == self._log_size:
            return
        self._log_size = size
        view = self.query_one("#llama-log", RichLog)
        view.clear()
        if not lines:
            view.write("no llama-server log yet (the managed server writes it when `atomic-agent llama start` or a "
                       "turn starts it)")
        for line in lines[-500:]:
            view.write(line)
