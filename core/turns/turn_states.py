"""The states of a turn in the ledger and the records the ledger hands out.

queued -> running -> completed | failed | stopped | cancelled | interrupted
queued -> cancelled (cancelled while waiting) | merged (claimed by a turn started with
sendMode `all`).
running -> parked -> resumed: the process died while the turn waited on a durable approval
(or question); the next start parks it instead of interrupting it, shows the record again,
and when the answer was acted on (the frozen call ran once, or the model is told no) the
turn is `resumed`: the next turn of its lane carries the conversation on from that result.
Every state but queued, running and parked is final and frozen in the database.

The live states hold their lane: a parked turn keeps it like a running one (whoever owns it),
so a turn admitted on its session meanwhile queues behind it until it is resumed — nothing
may write after the parked call before its answer is acted on.
"""

from __future__ import annotations

import hashlib

import attrs

from atomic_agent.sessions.writer_guard import TurnGuard

QUEUED = "queued"
RUNNING = "running"
COMPLETED = "completed"
FAILED = "failed"
STOPPED = "stopped"
CANCELLED = "cancelled"
INTERRUPTED = "interrupted"
MERGED = "merged"
PARKED = "parked"  # waiting on an approval record its dead process asked; `reason` names it
RESUMED = "resumed"  # a parked turn whose answer was acted on
LIVE_STATES = (QUEUED, RUNNING, PARKED)
# live turns that hold the lane whatever was admitted before them (a queued one waits its order)
LANE_HOLDERS = (RUNNING, PARKED)
SEND_MODES = ("one-at-a-time", "all")
# a turn recovery admits to answer what a restart owes: it carries no user text of its own
CONTINUATION_ORIGIN = "recovery"


def final_state(loop_status: str, stopped: bool) -> str:
    """The ledger state for a loop's TurnResult status; a cancel that a user stop caused is
    `stopped`, a turn a graceful stop parked is `interrupted` (the next start answers it)."""
    if loop_status == "done":
        return COMPLETED
    if loop_status == INTERRUPTED:
        return INTERRUPTED
    if loop_status == "cancelled":
        return STOPPED if stopped else CANCELLED
    return FAILED


def response_hash(visible_reply: str) -> str:
    return hashlib.sha256(visible_reply.encode("utf-8", "surrogatepass")).hexdigest()


@attrs.frozen
class TurnTicket:
    """An admitted turn: durable before anyone is told about it."""

    turn_id: str
    session_id: str
    lane: str
    admitted_order: int
    position: int  # live turns ahead of it in its lane when it was admitted
    text: str
    origin: str


@attrs.frozen
class StartedTurn:
    """A turn that just became running: the guard its writes carry, and what it claimed."""

    guard: TurnGuard
    turn_index: int
    merged: tuple[tuple[str, str], ...] = ()  # (turn id, text) of queued turns folded in (sendMode all)

    @property
    def turn_id(self) -> str:
        return self.guard.turn_id


@attrs.frozen
class LaneBusy:
    """`start` refused: an older live turn of the lane (any owner) must run first."""

    blocker: "TurnRecord"


@attrs.frozen
class QueuedSteer:
    """One row of the steering queue as read back."""

    steer_id: int
    session_id: str
    turn_id: str
    text: str
    owner: str | None


@attrs.frozen
class TurnRecord:
    """One row of the `turns` table as read back."""

    turn_id: str
    session_id: str
    lane: str
    admitted_order: int
    state: str
    origin: str
    text: str
    generation: int
    turn_index: int | None
    reason: str | None
    category: str | None
    response_hash: str | None
    merged_into: str | None
    owner: str | None


def ticket_of(turn: TurnRecord) -> TurnTicket:
    """A ticket for a turn admitted earlier (recovery resubmits it without admitting again)."""
    return TurnTicket(turn.turn_id, turn.session_id, turn.lane, turn.admitted_order, 0, turn.text, turn.origin)
