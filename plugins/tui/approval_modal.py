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
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from atomic_agent.api import approval_gate

HEAD, TAIL = 1200, 400


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
    """A modal over a durable record: another surface may settle it first, and then it closes
    without an answer (None)."""

    withdrawn = False

    def withdraw(self) -> None:
        """The record was settled elsewhere: close without an answer (now, or as soon as the
        screen is back on top if something was opened over it)."""
        self.withdrawn = True
        if self.is_current:
            self.dismiss(None)

    def on_screen_resume(self) -> None:
        if self.withdrawn:
            self.dismiss(None)


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
    BINDINGS = [Binding("y", "answer('y')", "once"), Binding("s", "answer('s')", "session"),
                Binding("a", "answer('a')", "always"), Binding("n", "answer('n')", "deny"),
                Binding("escape", "answer('n')", "deny")]

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

    def action_answer(self, key: str) -> None:
        if key in {a.key for a in self.keys}:
            self.dismiss(key)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id and event.button.id.startswith("answer-"):
            self.action_answer(event.button.id.removeprefix("answer-"))
