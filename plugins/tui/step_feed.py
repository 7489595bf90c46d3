"""The live step feed of one turn: a growing list of lines plus the reasoning being streamed.

Events arrive far faster than a terminal can usefully repaint (a streaming model sends a
delta every few milliseconds), so the widget only appends to its list and marks itself
dirty; Textual coalesces the repaints into its next frame. What is painted is bounded: the
last `SHOWN_LINES` lines (a long turn says how many earlier ones are folded; the Logs tab
and the session transcript keep them all) and the tail of the reasoning, so a frame costs
the same at event 10 and at event 10,000.
"""

from __future__ import annotations

from rich.text import Text
from textual.widget import Widget

from atomic_agent.plugins.tui.feed_lines import FeedLine, safe_text

STYLES = {"step": "bold cyan", "tool": "yellow", "result": "green", "error": "bold red", "notice": "magenta",
          "steer": "bold blue", "reasoning": "dim italic"}
REASONING_TAIL = 240
SHOWN_LINES = 60
MAX_LINES = 2000  # a runaway turn keeps its last lines; the transcript has everything


class StepFeed(Widget):
    DEFAULT_CSS = """
    StepFeed { height: auto; padding: 0 1; }
    """

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.lines: list[FeedLine] = []
        self.reasoning = ""
        self.dropped = 0

    def add(self, line: FeedLine) -> None:
        self.lines.append(line)
        if line.kind == "step":
            self.reasoning = ""  # a new step streams its own reasoning
        if len(self.lines) > MAX_LINES:
            cut = len(self.lines) - MAX_LINES
            del self.lines[:cut]
            self.dropped += cut
        self.refresh(layout=True)

    def add_reasoning(self, delta: str) -> None:
        self.reasoning = (self.reasoning + delta)[-REASONING_TAIL * 2:]
        self.refresh(layout=True)

    def plain(self) -> str:
        """Every line of the feed as text (tests read it)."""
        return "\n".join("  " * line.indent + line.text for line in self.lines)

    def render(self) -> Text:
        text = Text(no_wrap=False, overflow="fold")
        folded = self.dropped + max(len(self.lines) - SHOWN_LINES, 0)
        if folded:
            text.append(f"… {folded} earlier lines of this turn (the Logs tab lists every event)\n", style="dim")
        for line in self.lines[-SHOWN_LINES:]:
            text.append("  " * line.indent + line.text + "\n", style=STYLES.get(line.kind, ""))
        if self.reasoning:
            tail = safe_text(self.reasoning)[-REASONING_TAIL:]
            text.append(f"  thinking: {tail}\n", style=STYLES["reasoning"])
        text.rstrip()
        return text
