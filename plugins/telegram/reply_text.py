"""What the owner reads when a turn ends: the agent's reply (agent content, formatted), or
channel infrastructure (plain): a cancel notice, an empty-reply marker, a failure envelope."""

from __future__ import annotations

from typing import Any

import attrs

NO_REPLY = "(no reply)"
CANCELLED = "Turn cancelled."


@attrs.frozen
class ReplyText:
    body: str
    formatted: bool  # True only for the agent's own words


def from_result(result: Any) -> ReplyText | None:
    """From a TurnResult; None when the turn was parked (its answer comes after a restart)."""
    if result.status == "interrupted":
        return None
    if result.status == "cancelled" or result.state in ("stopped", "cancelled"):
        return ReplyText(CANCELLED, False)
    if result.status == "failed":
        return ReplyText(f"Turn failed [{result.category or result.reason}]: {result.error or result.reason}", False)
    reply = (result.reply or "").strip()
    return ReplyText(reply, True) if reply else ReplyText(NO_REPLY, False)


def from_answer(answer: Any) -> ReplyText | None:
    """From a TurnAnswer read back from durable state; None while it is still owed."""
    if answer.outcome == "pending":
        return None
    if answer.outcome == "completed":
        reply = (answer.reply or "").strip()
        return ReplyText(reply, True) if reply else ReplyText(NO_REPLY, False)
    if answer.outcome in ("stopped", "cancelled"):
        return ReplyText(CANCELLED, False)
    if answer.outcome == "gone":
        return ReplyText("The conversation of this message no longer exists.", False)
    return ReplyText(f"Turn failed [{answer.category or answer.outcome}]: {answer.message or answer.outcome}", False)
