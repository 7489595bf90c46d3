"""How one attempt ended, decided from the turn through the runtime's one failure taxonomy.

Grammar, tool and model failures block the task (the same message meets the same wall
again); transport, provider-timeout and storage failures are transient and retried; a
cancelled turn cancels the task; a turn a stop interrupted is answered by the runtime's
next start and never sent again.
"""

from __future__ import annotations

import attrs

RETRYABLE_CATEGORIES = ("transport", "provider_timeout", "storage")
BLOCKING_CATEGORIES = ("grammar", "tool", "model")

SUCCEEDED, RETRY, BLOCK, CANCEL, INTERRUPT, FAIL = "succeeded", "retry", "block", "cancel", "interrupt", "fail"


@attrs.frozen
class AttemptOutcome:
    kind: str  # succeeded | retry | block | cancel | interrupt | fail
    turn_id: str | None = None
    category: str | None = None
    error: str | None = None
    reply: str | None = None  # the turn's final text (what a report carries)


def outcome_of_category(category: str | None, error: str, turn_id: str | None = None) -> AttemptOutcome:
    if category == "cancelled":
        return AttemptOutcome(CANCEL, turn_id, category, error)
    if category in RETRYABLE_CATEGORIES:
        return AttemptOutcome(RETRY, turn_id, category, error)
    if category in BLOCKING_CATEGORIES:
        return AttemptOutcome(BLOCK, turn_id, category, error)
    return AttemptOutcome(FAIL, turn_id, category, error)


def outcome_of_result(result: object) -> AttemptOutcome:
    """From a `TurnResult`: success only when the turn completed."""
    status = getattr(result, "status", "")
    turn_id = getattr(result, "turn_id", "") or None
    if status == "done":
        return AttemptOutcome(SUCCEEDED, turn_id, reply=getattr(result, "reply", None))
    if status == "cancelled":
        return AttemptOutcome(CANCEL, turn_id, "cancelled", "the turn was cancelled")
    if status == "interrupted":
        return AttemptOutcome(INTERRUPT, turn_id, "interrupted", "a stop interrupted the turn; the agent's next start "
                                                                 "answers it (the message is not sent again)")
    category = getattr(result, "category", None)
    return outcome_of_category(category, getattr(result, "error", None) or f"the turn failed ({category})", turn_id)


def outcome_of_error(exc: BaseException) -> AttemptOutcome:
    """From an exception `run_turn` raised (nothing admitted, or the admission failed)."""
    from atomic_agent.api import failure_taxonomy

    failure = failure_taxonomy.classify_failure(exc)
    return outcome_of_category(failure.category, str(failure))


def outcome_of_answer(answer: object) -> AttemptOutcome:
    """From the durable answer of an admitted turn (after a restart): `TurnAnswer`."""
    outcome = getattr(answer, "outcome", "")
    turn_id = getattr(answer, "turn_id", None)
    if outcome == "completed":
        return AttemptOutcome(SUCCEEDED, turn_id, reply=getattr(answer, "reply", None))
    if outcome in ("cancelled", "stopped"):
        return AttemptOutcome(CANCEL, turn_id, "cancelled", getattr(answer, "message", "") or outcome)
    if outcome == "pending":
        return AttemptOutcome(INTERRUPT, turn_id, "interrupted",
                              "the agent stopped while the turn ran; the turn lifecycle answers it on a start that "
                              "resumes (the message is not sent again)")
    if outcome == "gone":
        return AttemptOutcome(BLOCK, turn_id, "session_not_found", "the turn's session was deleted")
    category = getattr(answer, "category", None)
    return outcome_of_category(category, getattr(answer, "message", "") or "the turn failed", turn_id)
