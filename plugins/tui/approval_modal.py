"""The approval modal: why the gate asks (the ladder category), exactly what would run, and
the four answers — y once, s every call of this category for the session, a this command
shape for the session, n deny. Only the answers the gate offers for this request are shown
and accepted (a category that is never grantable offers y and n only).

Everything shown came from a tool call the model wrote, so it is made safe first (no
escape sequences), and a long summary keeps its head and tail with a count of what is hidden.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from atomic_agent.api import approval_gate

HEAD, TAIL = 1200, 400
NO_ANSWER = object()  # a key that answers nothing


def shown(text: str) -> str:
    from atomic_agent.plugins.tui.feed_lines import UNSAFE_CHARS

    text = UNSAFE_CHARS.sub("�", text.replace("\t", "    "))
    if len(text) > HEAD + TAIL:
        text = f"{text[:HEAD]} …[{len(text) - HEAD - TAIL} characters not shown]… {text[-TAIL:]}"
    return text


def offered(request: Any) -> list[Any]:
    """The gate's answers for this request (key, kind, word, meaning), in the order shown."""
    return approval_gate.offered_answers(request, shown)


def decision_for(request: Any, key: str | None) -> Any:
    """The AnswerKind the modal's answer `key` stands for; anything not offered denies."""
    for answer in offered(request):
        if answer.key == key:
            return answer.kind
    return approval_gate.AnswerKind.DENY


def describe(request: Any) -> Text:
    level = f"{request.level} {approval_gate.LEVEL_NAMES.get(request.level, '')}".strip()
    text = Text()
    text.append(f"{request.label}", style="bold")
    text.append(f"  ({request.category}; asked at level {level})\n", style="dim")
    text.append(f"{request.tool}\n", style="bold yellow")
    text.append(shown(request.summary) + "\n")
    if request.command_shape:
        text.append("command: ", style="dim")
        text.append(shown(request.command_shape) + "\n")
    if request.binding:
        text.append("bound to: ", style="dim")
        text.append(f"{request.binding} (cwd, argv and file hashes; a change asks again)\n")
    if request.note:
        text.append(f"note: {shown(request.note)}\n", style="bold red")
    return text


class SettledElsewhereModal(ModalScreen[Any]):
    """A modal over a durable record, answered once: another surface may settle it first, and
    then it closes without an answer (None).

    Its answer keys are read here, in the order the keys arrived, not through bindings: a
    terminal delivers a fast typist's answer and next words in one read, and every key of that
    read reaches this modal before any binding runs. So the first answer key closes it at once,
    and every later key is the user typing on into the chat: it goes to the chat editor, never
    to an answer (a second answer would close a screen that is not this one)."""

    class TypedOn(Message):
        """A key typed after the answer, while the modal closes: the chat's (the app routes it)."""

        def __init__(self, key: events.Key) -> None:
            super().__init__()
            self.key = key

    withdrawn = False
    closing = False  # answered or withdrawn: dismissed once, on its way off the screen

    def close_with(self, result: Any) -> None:
        """Dismiss with `result` unless an answer already closed it."""
        if self.closing:
            return
        self.closing = True
        self.dismiss(result)

    def withdraw(self) -> None:
        """The record was settled elsewhere: close without an answer (now, or as soon as the
        screen is back on top if something was opened over it)."""
        self.withdrawn = True
        if self.is_current:
            self.close_with(None)

    def on_screen_resume(self) -> None:
        if self.withdrawn:
            self.close_with(None)

    def answer_for(self, event: events.Key) -> Any:
        """The answer a key gives, or NO_ANSWER for a key that answers nothing."""
        return NO_ANSWER

    def on_key(self, event: events.Key) -> None:
        if self.closing:
            event.stop()
            event.prevent_default()
            self.app.post_message(self.TypedOn(events.Key(event.key, event.character)))
            return
        answer = self.answer_for(event)
        if answer is not NO_ANSWER:
            event.stop()
            event.prevent_default()
            self.close_with(answer)


class ApprovalModal(SettledElsewhereModal):
    """Dismisses with the offered answer's key ("y", "s", "a" or "n"); Esc denies; None when
    withdrawn (another surface answered first)."""

    DEFAULT_CSS = """
    ApprovalModal { align: center middle; }
    ApprovalModal > Vertical { width: 90%; max-width: 110; height: auto; max-height: 90%;
        border: thick $warning; background: $surface; padding: 1 2; }
    ApprovalModal #approval-call { height: auto; max-height: 20; overflow-y: auto; }
    ApprovalModal Horizontal { height: auto; margin-top: 1; }
    ApprovalModal Button { margin-right: 1; min-width: 10; }
    ApprovalModal #approval-keys { height: auto; margin-top: 1; color: $text-muted; }
    """

    def __init__(self, request: Any) -> None:
        super().__init__()
        self.request = request
        self.keys = offered(request)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("approval needed", classes="title")
            yield Static(describe(self.request), id="approval-call")
            yield Static("\n".join(f"{a.key}  {a.meaning}" for a in self.keys), id="approval-keys", markup=False)
            with Horizontal():
                for a in self.keys:
                    yield Button(f"{a.key} {a.word}", id=f"answer-{a.key}",
                                 variant="error" if a.key == "n" else "primary" if a.key == "y" else "default")

    def answer_for(self, event: events.Key) -> Any:
        if event.key == "escape":
            return "n"
        return event.key if event.key in {a.key for a in self.keys} else NO_ANSWER

    def action_answer(self, key: str) -> None:
        if key in {a.key for a in self.keys}:
            self.close_with(key)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id and event.button.id.startswith("answer-"):
            self.action_answer(event.button.id.removeprefix("answer-"))
