"""The question modal: an `ask_user` question (the prompt, why the agent asks, its evidence)
answered with one of its options (keys 1-8 or a click) or, when it allows, a typed answer.

Questions are durable records answered once from any surface; the TUI shows the pending
ones (its own turns' and other surfaces') through shared_approvals. Esc closes it without an
answer for a while ("not now"): the question stays open for any surface until it expires.
Everything shown was written by the model, so it is made safe first.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from atomic_agent.plugins.tui.approval_modal import NO_ANSWER, SettledElsewhereModal, shown

NOT_NOW = "not-now"


def describe(question: dict[str, Any], session_id: str) -> Text:
    text = Text()
    text.append(shown(str(question.get("prompt", ""))) + "\n", style="bold")
    reason = str(question.get("reason") or "")
    if reason:
        text.append(f"why the agent asks: {shown(reason).replace('_', ' ')}\n", style="dim")
    evidence = str(question.get("evidence") or "")
    if evidence:
        text.append(f"evidence: {shown(evidence)}\n", style="dim")
    text.append(f"session {session_id}\n", style="dim")
    return text


class QuestionModal(SettledElsewhereModal):
    """Dismisses with ("option", id), ("text", answer), NOT_NOW (Esc) or None (withdrawn)."""

    DEFAULT_CSS = """
    QuestionModal { align: center middle; }
    QuestionModal > Vertical { width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $accent; background: $surface; padding: 1 2; }
    QuestionModal #question-text { height: auto; max-height: 16; overflow-y: auto; }
    QuestionModal Horizontal { height: auto; margin-top: 1; }
    QuestionModal Button { margin-right: 1; min-width: 10; }
    QuestionModal Input { margin-top: 1; }
    """

    def __init__(self, question: dict[str, Any], session_id: str) -> None:
        super().__init__()
        self.question = question
        self.session_id = session_id
        self.options = [(str(o.get("id", "")), str(o.get("label", o.get("id", ""))))
                        for o in question.get("options") or [] if isinstance(o, dict)][:8]
        self.free_text = bool(question.get("allowFreeText"))

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("the agent asks you", classes="title")
            yield Static(describe(self.question, self.session_id), id="question-text")
            if self.options:
                with Horizontal():
                    for n, (_option, label) in enumerate(self.options, start=1):
                        yield Button(f"{n} {shown(label)}", id=f"option-{n}")
            if self.free_text:
                yield Input(id="question-answer", placeholder="type an answer, Enter sends")
            keys = f"1-{len(self.options)} choose · " if self.options else ""
            yield Static(f"{keys}Esc not now (it stays open for any surface)", id="question-keys", markup=False)

    def on_mount(self) -> None:
        if self.free_text and not self.options:
            self.query_one(Input).focus()

    def answer_for(self, event: Any) -> Any:
        if event.key == "escape":
            return NOT_NOW
        if isinstance(self.focused, Input):
            return NO_ANSWER  # digits typed into the answer are text
        if event.character and event.character.isdigit():
            n = int(event.character)
            if 1 <= n <= len(self.options):
                return ("option", self.options[n - 1][0])
        return NO_ANSWER

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id and event.button.id.startswith("option-"):
            self.close_with(("option", self.options[int(event.button.id.removeprefix("option-")) - 1][0]))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.value.strip():
            self.close_with(("text", event.value))


