"""The message editor, live during a turn: Enter sends (or, while a turn runs, steers or
queues per the mode shown beside it), Ctrl+J adds a new line, Esc stops the running turn.

What is typed stays in the editor until the chat accepts it, so a refused message (bad
text, a state dir that cannot be written) is never lost. A paste of any size goes in
whole; the editor is a TextArea, whose document handles long text without a line limit.
"""

from __future__ import annotations

from textual import events
from textual.message import Message
from textual.widgets import TextArea


class SteeringEditor(TextArea):
    DEFAULT_CSS = """
    SteeringEditor { height: auto; min-height: 3; max-height: 8; border: round $accent; }
    """

    class Submitted(Message):
        def __init__(self, editor: SteeringEditor, text: str) -> None:
            super().__init__()
            self.editor = editor
            self.text = text

    class StopRequested(Message):
        pass

    def __init__(self, **kwargs: object) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)  # type: ignore[arg-type]

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self, self.text))
            return
        if event.key == "ctrl+j":  # a terminal cannot tell Shift+Enter from Enter; Ctrl+J is the newline
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            self.post_message(self.StopRequested())
            return
        await super()._on_key(event)
