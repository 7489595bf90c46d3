"""What a host answers to an approval prompt: once, this kind for the session, this
command shape for the session, or no — optionally with a bound on the grant.

Hosts may also answer a plain bool (True = once) or a key string ("y", "s", "a", "n").
"""

from __future__ import annotations

import enum

import attrs


class AnswerKind(str, enum.Enum):
    ONCE = "once"  # [y] this call only
    SESSION = "session"  # [s] the whole category for this session
    SHAPE = "shape"  # [a] this command shape (binary) for this session
    DENY = "deny"  # [n]


_KEYS = {"y": AnswerKind.ONCE, "yes": AnswerKind.ONCE, "s": AnswerKind.SESSION, "a": AnswerKind.SHAPE,
         "n": AnswerKind.DENY, "no": AnswerKind.DENY}


def _positive_or_none(_inst: object, attribute: attrs.Attribute, value: object) -> None:
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
