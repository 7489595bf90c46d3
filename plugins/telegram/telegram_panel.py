"""The TUI's Telegram panel: the channel's status, enable/disable, the bot token (typed into
a masked field, never shown), pairing with a live countdown, clearing the owner, restart.

Keys: e enables or disables, t sets the token, x clears it, p opens the pairing window (or
closes an open one), o clears the owner (y/n), s restarts, r reloads. Every key has a
button that calls the same action, so the mouse and the keyboard cannot disagree.
Imported only by the plugin's `TuiPanel.build`, so Textual loads only when the TUI runs.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Static

from .telegram_panel_orchestrator import TelegramPanelOrchestrator

TICK_S = 1.0  # the countdown and status refresh while the panel is shown
# button id -> the action the same key runs
BUTTONS = (("tg-enable", "Enable/disable (e)", "toggle_enabled"), ("tg-token", "Set token (t)", "set_token"),
           ("tg-clear-token", "Clear token (x)", "clear_token"), ("tg-pair", "Pair (p)", "pair"),
           ("tg-clear-owner", "Clear owner (o)", "clear_owner"), ("tg-restart", "Restart (s)", "restart"))


class TokenScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical(id="tg-token-form"):
            yield Label("Bot token from @BotFather (stored in <state>/.env, mode 0600; never shown). "
                        "Enter saves, Esc cancels.", markup=False)
            yield Input(id="tg-token-input", password=True, placeholder="123456789:AA...")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.dismiss(event.value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ConfirmScreen(ModalScreen[bool]):
    BINDINGS = [Binding("y,enter", "answer(True)", "Yes"), Binding("n,escape", "answer(False)", "No")]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        yield Label(self.question, markup=False)

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class TelegramPanel(Widget, can_focus=True):
    BINDINGS = [Binding("e", "toggle_enabled", "Enable/disable"), Binding("t", "set_token", "Token"),
                Binding("x", "clear_token", "Clear token"), Binding("p", "pair", "Pair"),
                Binding("o", "clear_owner", "Clear owner"), Binding("s", "restart", "Restart"),
                Binding("r", "reload", "Reload")]
    DEFAULT_CSS = "TelegramPanel { height: 1fr; } TelegramPanel #tg-status { height: auto; }"

    def __init__(self, context: Any) -> None:
        super().__init__(id="telegram-panel")
        self.context = context
        self.orchestrator = TelegramPanelOrchestrator(context.runtime)
        self.busy = False  # one change at a time; keys pressed meanwhile are ignored

    def compose(self) -> ComposeResult:
        yield Static("", id="tg-status", markup=False)
        with Horizontal():
            for button_id, label, _action in BUTTONS:
                yield Button(label, id=button_id)

    def on_mount(self) -> None:
        self.action_reload()
        self.set_interval(TICK_S, self.action_reload)

    def action_reload(self) -> None:
        self.query_one("#tg-status", Static).update("\n".join(self.orchestrator.status_lines()))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        action = next((a for b, _l, a in BUTTONS if b == event.button.id), None)
        if action is not None:
            getattr(self, f"action_{action}")()
        self.focus()  # keys keep working after a click

    def _change(self, title: str, work: Any, done: str | None = None) -> None:
        """Run one live-control change as a job; its error becomes a notice."""
        if self.busy:
            return

        async def job() -> None:
            try:
                status = await work()
            except (ValueError, RuntimeError, OSError) as exc:
                self.context.notify(f"{title}: {exc}", severity="error")
                return
            finally:
                self.busy = False
                self.action_reload()
            if done:
                self.context.notify(done)
            if isinstance(status, dict) and status.get("state") == "down":
                self.context.notify(f"Telegram is down: {status.get('reason')}", severity="warning")

        self.busy = True
        self.context.run_job(title, job)

    def action_toggle_enabled(self) -> None:
        enable = not self.orchestrator.status()["enabled"]
        self._change("Enabling Telegram" if enable else "Disabling Telegram",
                     lambda: self.orchestrator.set_enabled(enable),
                     "Telegram enabled." if enable else "Telegram disabled.")

    def action_set_token(self) -> None:
        self.app.push_screen(TokenScreen(), self._token_entered)

    def _token_entered(self, token: str | None) -> None:
        if token is None:
            return
        try:
            self.orchestrator.check_token(token)
        except ValueError as exc:  # the message never repeats what was typed
            self.context.notify(f"Token not saved: {exc}", severity="error")
            return
        self._change("Saving the bot token", lambda: self.orchestrator.set_token(token), "Bot token saved.")

    def action_clear_token(self) -> None:
        if not self.orchestrator.status()["hasToken"]:
            self.context.notify("No bot token is stored.")
            return
        self.app.push_screen(ConfirmScreen("Remove the bot token from .env? The channel stops. (y/n)"),
                             lambda yes: self._change("Clearing the bot token", self.orchestrator.clear_token,
                                                      "Bot token removed.") if yes else None)

    def action_pair(self) -> None:
        if self.orchestrator.pairing_seconds_left() is not None:
            self.orchestrator.cancel_pairing()
            self.context.notify("Pairing window closed.")
        else:
            try:
                self.orchestrator.start_pairing()
            except RuntimeError as exc:
                self.context.notify(f"Cannot pair: {exc}", severity="error")
                return
            self.context.notify("Pairing open: the first private message to the bot claims it.")
        self.action_reload()

    def action_clear_owner(self) -> None:
        if self.orchestrator.status()["ownerUserId"] is None:
            self.context.notify("The bot has no owner.")
            return
        self.app.push_screen(ConfirmScreen("Forget the bot's owner? Nobody can use it until you pair again. (y/n)"),
                             lambda yes: self._change("Clearing the owner", self.orchestrator.clear_owner,
                                                      "Owner cleared.") if yes else None)

    def action_restart(self) -> None:
        self._change("Restarting Telegram", self.orchestrator.restart, "Telegram restarted.")


def build_telegram_panel(context: Any) -> Widget:
    return TelegramPanel(context)
