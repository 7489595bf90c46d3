"""The chat's queue of waiting messages, as both chat hosts (in-process and attached to serve)
keep it: what a queued message carries, which text may be sent at all, the busy-submit
modes, and where a steer that did not land goes (first, behind the steers already put back,
so the order the person typed them survives)."""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

import attrs

from atomic_agent.api import text_problem

# The runtime's own cap on a steer's size (steering_inbox.MAX_STEER_CHARS is not public):
# a longer message goes to the queue as a turn of its own instead
STEER_CHARS = 64 * 1024
MODES = ("steer", "queue")  # what Enter does while a turn runs (tui.whileBusySubmit)


class ChatSink(Protocol):
    """What a chat host tells the screen."""

    def user_message(self, text: str, how: str) -> None: ...

    def turn_event(self, event: dict[str, Any]) -> None: ...

    def chat_notice(self, text: str, severity: str = "information") -> None: ...

    def state_changed(self) -> None: ...


@attrs.frozen
class Pending:
    text: str
    steer_id: str = ""  # a handed-back steer's durable id: re-sent as such, never twice
    front: bool = False  # a steer (refused or handed back): ahead of the messages queued normally
    tool_choice: str | None = None  # /tool: the tool the turn's first step must call
    request_key: str = ""  # attached to serve: the Idempotency-Key its sends carry (a re-send runs it once)


def sendable(text: str, sink: ChatSink) -> bool:
    """Whether the editor's text may be sent; a refusal is said, and the text stays in the editor."""
    problem = text_problem(text)
    if problem is not None:
        sink.chat_notice(f"{problem}; fix the text and send again", "error")
        return False
    return bool(text.strip())


def checked_mode(mode: str) -> str:
    if mode not in MODES:
        raise ValueError(f"the busy-submit mode is steer or queue, not {mode!r}")
    return mode


def put_in_front(pending: deque[Pending], text: str) -> None:
    """A steer that did not land: first in the queue, behind the steers already put back."""
    ahead = 0
    while ahead < len(pending) and pending[ahead].front:
        ahead += 1
    pending.insert(ahead, Pending(text, front=True))
