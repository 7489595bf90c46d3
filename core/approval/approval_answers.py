"""What an approval prompt asks and what a host can answer to it.

A host answers once, this category for the session, this command shape for the session,
or no, optionally with a bound on the grant. Hosts may also answer a plain bool (True =
once) or a key string ("y", "s", "a", "n").
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from typing import Any

import attrs

from atomic_agent.approval.approval_records import ApprovalRecord


@attrs.frozen
class ApprovalRequest:
    """What a host shows: why (category + label), what (tool, summary) and what it may grant."""

    session_id: str
    tool: str
    category: str
    label: str
    summary: str
    command_shape: str | None = None
    level: int = 1
    can_grant_category: bool = False
    can_grant_shape: bool = False
    binding: str | None = None  # fingerprint of the exact call
    note: str = ""  # e.g. why the person is asked again
    question: dict[str, Any] | None = None  # an ask_user question (prompt, options, allowFreeText, reason)
    approval_id: str | None = None  # the durable record every surface answers (when the gate keeps records)
    expires_at: float | None = None  # epoch seconds the record expires at


class AnswerKind(str, enum.Enum):
    ONCE = "once"  # [y] this call only
    SESSION = "session"  # [s] the whole category for this session
    SHAPE = "shape"  # [a] this command shape (binary) for this session
    DENY = "deny"  # [n]


_KEYS = {"y": AnswerKind.ONCE, "yes": AnswerKind.ONCE, "s": AnswerKind.SESSION, "a": AnswerKind.SHAPE,
         "n": AnswerKind.DENY, "no": AnswerKind.DENY}


@attrs.frozen
class OfferedAnswer:
    """One answer a prompt offers: the key a person presses, what it decides, a one-word
    label (a button) and what it means for this request."""

    key: str
    kind: AnswerKind
    word: str
    meaning: str


def offered_answers(request: ApprovalRequest, show: Callable[[str], str] = str) -> list[OfferedAnswer]:
    """The answers a prompt for `request` offers, in the order shown — the one table every
    surface that asks with keys (the terminal, the TUI) reads. [s] and [a] appear only when
    the gate said a grant is possible. `show` makes the command shape (model-written text)
    safe for the surface's display."""
    answers = [OfferedAnswer("y", AnswerKind.ONCE, "once", "allow this call once")]
    if request.can_grant_category:
        answers.append(OfferedAnswer("s", AnswerKind.SESSION, "session", f"allow every {request.label} this session"))
    if request.can_grant_shape and request.command_shape:
        answers.append(OfferedAnswer("a", AnswerKind.SHAPE, "always",
                                     f"allow all `{show(request.command_shape)}` this session"))
    answers.append(OfferedAnswer("n", AnswerKind.DENY, "deny", "deny"))
    return answers


def _positive_or_none(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{attribute.name} must be a positive number or None, got {value!r}")


@attrs.frozen
class ApprovalAnswer:
    """A decision; `ttl_s` / `uses` bound a session grant (ignored for once/deny)."""

    kind: AnswerKind
    ttl_s: float | None = attrs.field(default=None, validator=_positive_or_none)
    uses: int | None = attrs.field(default=None, validator=_positive_or_none)

    @property
    def approved(self) -> bool:
        return self.kind is not AnswerKind.DENY

    @classmethod
    def once(cls) -> ApprovalAnswer:
        return cls(AnswerKind.ONCE)

    @classmethod
    def deny(cls) -> ApprovalAnswer:
        return cls(AnswerKind.DENY)

    @classmethod
    def session(cls, ttl_s: float | None = None, uses: int | None = None) -> ApprovalAnswer:
        return cls(AnswerKind.SESSION, ttl_s, uses)

    @classmethod
    def shape(cls, ttl_s: float | None = None, uses: int | None = None) -> ApprovalAnswer:
        return cls(AnswerKind.SHAPE, ttl_s, uses)


def normalise_answer(value: object) -> ApprovalAnswer:
    """Any host answer as an ApprovalAnswer; anything unrecognised is a denial (fail closed)."""
    if isinstance(value, ApprovalAnswer):
        return value
    if isinstance(value, AnswerKind):
        return ApprovalAnswer(value)
    if isinstance(value, bool):
        return ApprovalAnswer.once() if value else ApprovalAnswer.deny()
    if isinstance(value, str):
        return ApprovalAnswer(_KEYS.get(value.strip().lower(), AnswerKind.DENY))
    return ApprovalAnswer.deny()


def answer_of(record: ApprovalRecord) -> ApprovalAnswer:
    """The answer a settled record holds (a grant's bounds ride in its answer text)."""
    try:
        kind = AnswerKind(record.decision)  # records keep the decision's value: once, session, shape, deny
    except ValueError:
        kind = AnswerKind.ONCE if record.approved else AnswerKind.DENY
    if kind not in (AnswerKind.SESSION, AnswerKind.SHAPE) or not record.answer_text:
        return ApprovalAnswer(kind)
    try:
        bounds = json.loads(record.answer_text)
        return ApprovalAnswer(kind, bounds.get("ttlS"), bounds.get("uses"))
    except (ValueError, TypeError, AttributeError):
        return ApprovalAnswer.once()  # unreadable bounds: this call only, never a wider grant

