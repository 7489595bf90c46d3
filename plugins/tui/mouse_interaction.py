"""The mouse contract: what a click and the wheel mean, and when the terminal gets its own
text selection back.

- Reporting is one live switch (`MouseSwitch`): the app always starts able to report, and the
  switch decides whether the terminal is asked to (tui.mouse, --no-mouse, /mouse on|off).
  While it is off, mouse events that still arrive are dropped before any widget sees them.
- A list row (`RowList`): the first click selects a row, a second click on the selected row
  activates it — the same action Enter runs, so a click can never do something the keyboard
  does not. The wheel moves the selection through the same cursor actions as the arrow keys.
- Text selection: while reporting is on the terminal cannot select text, so `suspend`
  turns reporting off for a short window (10 s) and back on by itself; turning the mouse off
  during the window keeps it off. A press on dead content (text, not a control) followed by
  a drag opens the window too, since that gesture means "I wanted to select".
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widgets import DataTable

SELECTION_WINDOW_S = 10.0


class MouseSwitch:
    """Whether the terminal reports the mouse; owned by the app, applied to its driver."""

    def __init__(self, app: Any, enabled: bool) -> None:
        self.app = app
        self.enabled = enabled  # the person's choice (config, flag, /mouse)
        self.suspended = False  # a selection window is open
        self._timer: Any = None
        self._armed = False  # a press on dead content: a drag now means "select text"

    @property
    def reporting(self) -> bool:
        return self.enabled and not self.suspended

    def _apply(self) -> None:
        driver = getattr(self.app, "_driver", None)
        method = "_enable_mouse_support" if self.reporting else "_disable_mouse_support"
        if driver is not None and hasattr(driver, method):
            getattr(driver, method)()

    def set(self, enabled: bool) -> None:
        self.enabled = enabled
        if not enabled:
            self._end_window(apply=False)
        self._apply()

    def suspend(self, seconds: float = SELECTION_WINDOW_S, why: str = "") -> None:
        """Open the selection window (a no-op with the mouse already off)."""
        if not self.enabled:
            self.app.notify("the mouse is off: the terminal already selects text (/mouse on to click again)")
            return
        self.suspended = True
        self._apply()
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.app.set_timer(seconds, self._end_window)
        lead = f"{why}; " if why else ""
        self.app.notify(f"{lead}mouse off for {seconds:.0f} s: select text with your terminal now", timeout=seconds)

    def _end_window(self, apply: bool = True) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.suspended:
            self.suspended = False
            if apply:
                self._apply()

    def admit(self, event: events.Event, target: Any) -> bool:
        """Whether a mouse event reaches the widgets (False: swallowed). `target` is the
        widget under the pointer, used to tell a drag on dead content from one on a control."""
        if not self.reporting:
            return False
        if isinstance(event, events.MouseDown):
            self._armed = event.button == 1 and target is not None and not _is_live(target)
        elif isinstance(event, events.MouseUp):
            self._armed = False
        elif isinstance(event, events.MouseMove) and self._armed and event.button == 1:
            self._armed = False
            self.suspend(why="that drag was a text selection; drag again")
            return False
        return True


def _is_live(widget: Any) -> bool:
    """A control (focusable, or inside something focusable such as a list or an input)."""
    node = widget
    while node is not None:
        if getattr(node, "can_focus", False) or getattr(node, "_is_row_list", False):
            return True
        node = getattr(node, "parent", None)
    return False


class RowList(DataTable[Any]):
    """A table of rows under the contract: click selects, a second click activates (Enter).

    The one rows widget of the TUI: the app's own tabs use it and every plugin panel gets it
    from `TuiContext.rows()`, so a row answers the mouse the same way on every tab. A click
    anywhere on a row counts (Textual's own rule wants the same cell twice)."""

    _is_row_list = True

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("zebra_stripes", True)
        super().__init__(cursor_type="row", **kwargs)

    async def _on_click(self, event: events.Click) -> None:
        row = event.style.meta.get("row") if event.style.meta else None
        if not isinstance(row, int) or row < 0:
            return  # the header or empty space: nothing to select
        event.prevent_default()
        event.stop()
        self.focus()
        if row == self.cursor_row:
            self.action_select_cursor()  # what Enter does
        else:
            self.move_cursor(row=row)

    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        event.stop()
        event.prevent_default()
        self.action_cursor_down()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        event.stop()
        event.prevent_default()
        self.action_cursor_up()

    def selected_key(self) -> str | None:
        """The key of the row under the cursor (None for an empty table)."""
        if self.row_count == 0:
            return None
        row_key, _ = self.coordinate_to_cell_key(self.cursor_coordinate)
        return None if row_key.value is None else str(row_key.value)
