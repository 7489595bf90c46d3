"""The contract of the turn ledger and the steering queue (SQLite today: `TurnLedger`,
`SteerQueue`), so another backend can follow without touching lifecycle or recovery.

Both are built on a `SessionRepository` (`store`) and share its unit of work: each method
that writes runs in one `store.write()` transaction (joining the caller's when one is open),
and methods taking a `WriteHandle` run only inside the caller's transaction. When a method
returns, what it reports is committed (unless an outer transaction is still open). Every
state move is compare-and-set on the stored row: of two owners (processes) racing for one
move, exactly one is told it happened. `owner` names the process writing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from atomic_agent.sessions.session_database import SessionRepository, WriteHandle
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard
from atomic_agent.turns.request_keys import KeyedTurn, RequestKey
from atomic_agent.turns.turn_states import LaneBusy, QueuedSteer, StartedTurn, TurnRecord, TurnTicket


@runtime_checkable
class TurnRepository(Protocol):
    """Every turn's state (queued -> running -> final; final states frozen) and an audit row
    per transition that is never rewritten or deleted, not even with the turn's session."""

    @property
    def store(self) -> SessionRepository: ...  # read-only, so an implementation may hold its own store class

    owner: str

    # -- reads ------------------------------------------------------------------------------
    def get(self, turn_id: str) -> TurnRecord | None:
        """The turn's current row, or None when there is none (never admitted, or its session deleted)."""
        ...

    def lane(self, lane: str, states: tuple[str, ...] | None = None) -> list[TurnRecord]:
        """The lane's turns in admission order (only those in `states` when given)."""
        ...

    def in_state(self, *states: str) -> list[TurnRecord]:
        """Turns in any of `states`, in admission order."""
        ...

    def has_live_turn(self, lane: str) -> bool:
        """True while a turn of the lane is queued, running or parked (any owner)."""
        ...

    def unsettled_interruptions(self) -> list[TurnRecord]:
        """Interrupted turns whose open tool calls were not yet marked settled."""
        ...

    def audit_rows(self, turn_id: str | None = None) -> list[dict[str, Any]]:
        """Audit rows (turn_id, session_id, lane, from_state, to_state, generation, reason,
        owner, at), oldest first; of one turn when `turn_id` is given."""
        ...

    def turn_for_key(self, key: str) -> KeyedTurn | None:
        """The turn an idempotency key admitted, or None (never used, or its session deleted)."""
        ...

    # -- transitions ------------------------------------------------------------------------
    def remember_key_in(self, handle: WriteHandle, request_key: RequestKey, turn_id: str, session_id: str) -> None:
        """Inside the admission's transaction: the key names `turn_id` from now on;
        DuplicateRequestError (nothing written by this call) when it already names a turn."""
        ...

    def rebind_steer_key_in(self, handle: WriteHandle, steer_id: int | str, turn_id: str) -> None:
        """Inside the caller's transaction: a key that steered (stored with caller_ref
        `steer:<steer_id>`) names `turn_id` from now on, the turn the steer became, whose
        reply answers it."""
        ...

    def admit(self, session_id: str, text: str, origin: str, lane: str | None = None,
              turn_id: str | None = None) -> TurnTicket:
        """Commit a queued turn (lane defaults to the session) with the next admission order,
        which keeps increasing across restarts and processes; SessionNotFoundError (nothing
        written) for an unknown session. Durable when this returns."""
        ...

    def admit_in(self, handle: WriteHandle, session_id: str, text: str, origin: str, lane: str,
                 turn_id: str) -> TurnTicket:
        """`admit` inside the caller's transaction (it commits or rolls back with the caller)."""
        ...

    def requeue_in(self, handle: WriteHandle, session_id: str, text: str, origin: str, lane: str, why: str,
                   owner: str | None) -> TurnTicket:
        """Inside the caller's transaction: admit a message that was a steer as a queued turn
        owned by `owner` (None: any resuming host may adopt it), with `why` in the audit."""
        ...

    def start(self, turn_id: str, session: SessionState,
              send_mode: str = "one-at-a-time") -> StartedTurn | LaneBusy | None:
        """queued -> running under a new generation, with the turn's opening transcript rows, in
        one transaction. None when the turn is no longer queued; LaneBusy (nothing written)
        while a turn of its lane runs or is parked, or an older one is queued, in any process.
        With send mode `all` the lane's other queued turns are merged into it in the same
        transaction."""
        ...

    def adopt(self, turn: TurnRecord, reason: str) -> bool:
        """Take over a queued turn of a dead owner (compare-and-set on state and owner);
        False when someone adopted, started or withdrew it first."""
        ...

    def finalize(self, guard: TurnGuard, session: SessionState, rows: list[TranscriptEntry], state: str,
                 reason: str | None, category: str | None, visible_reply: str) -> None:
        """running -> `state` with the closing transcript rows and the reply's hash, in one
        transaction; StaleWriterError (nothing written) unless `guard` is the running
        generation. The turn is frozen afterwards."""
        ...

    def interrupt_in(self, handle: WriteHandle, turn: TurnRecord, reason: str) -> bool:
        """Inside the caller's transaction: running -> interrupted at `turn.generation`, the
        generation bumped so that writer is fenced out; False (nothing written) when the turn
        moved meanwhile."""
        ...

    def park_in(self, handle: WriteHandle, turn: TurnRecord, reason: str) -> bool:
        """Inside the caller's transaction: running -> parked at `turn.generation` (bumped), owned
        by this owner: its dead process was waiting on a durable approval, named in `reason`;
        False (nothing written) when the turn moved meanwhile."""
        ...

    def claim_parked(self, turn: TurnRecord, reason: str) -> bool:
        """Take over a parked turn of a dead owner (compare-and-set on its owner); False when
        someone claimed or resumed it first."""
        ...

    def resume_parked(self, turn: TurnRecord, reason: str, rows: list[TranscriptEntry]) -> bool:
        """parked -> resumed (final), with `rows` appended to its session, in one transaction;
        False unless it is parked and owned by this owner."""
        ...

    def interrupt_unfinalized(self, guard: TurnGuard, reason: str) -> bool:
        """running -> interrupted (generation bumped) for a turn whose own finalize could not be
        written; no transcript rows. False when it is no longer running at `guard`."""
        ...

    def cancel_queued(self, turn_id: str, reason: str) -> bool:
        """queued -> cancelled; False (nothing written) when the turn is not queued."""
        ...

    def interrupt_queued(self, turn_id: str, reason: str) -> bool:
        """queued -> interrupted for a turn whose start failed on its store; False (nothing
        written) when the turn is not queued."""
        ...

    def mark_settled(self, turn: TurnRecord) -> None:
        """Audit that an interrupted turn owes no tool result any more."""
        ...


@runtime_checkable
class SteerRepository(Protocol):
    """Accepted mid-turn steers, each in exactly one place. A steer id is never reused, not
    after its row is gone, not across restarts or processes. A steer leaves the queue only by
    being claimed (deleted) inside the transaction that records where it went; of two
    claimers exactly one gets its text."""

    @property
    def store(self) -> SessionRepository: ...  # read-only, so an implementation may hold its own store class

    owner: str

    def enqueue(self, session_id: str, turn_id: str, text: str,
                remember: Callable[[WriteHandle, int], object] | None = None) -> int:
        """Commit an accepted steer for `turn_id`; returns its id (increasing). `remember(handle,
        steer_id)` runs inside the same transaction; if it raises, nothing is queued."""
        ...

    def consume(self, steer_ids: Sequence[int], record: Callable[[list[str]], object]) -> list[str]:
        """Claim the steers and call `record(texts)` in one transaction; the texts this call won
        (`record` is not called when it won none). If `record` raises, nothing is claimed and
        the error propagates."""
        ...

    def claim(self, handle: WriteHandle, steer_ids: Sequence[int]) -> list[str]:
        """Inside the caller's transaction: delete the steers; the texts of those this call won
        (in the order given)."""
        ...

    def peek(self, steer_ids: Sequence[int]) -> list[str]:
        """Texts of those steers still queued, in id order, without claiming them."""
        ...

    def hand_back(self, steer_ids: Sequence[int], turn_id: str) -> list[int]:
        """Mark steers handed back at the end of `turn_id` (they stay queued until re-sent,
        dismissed or requeued); the ids still present, in order."""
        ...

    def handed_back_by(self, turn_id: str) -> list[QueuedSteer]:
        """Steers handed back at the end of `turn_id`, oldest first."""
        ...

    def undelivered_to(self, turn_id: str) -> list[QueuedSteer]:
        """Once `turn_id` has ended: the steers accepted for it still queued — handed back by
        it, or never marked because the hand-back write failed — oldest first."""
        ...

    def take_handed_back(self, handle: WriteHandle, steer_id: int | str) -> str | None:
        """Inside the caller's transaction: claim a handed-back steer (a re-send); its text, or
        None when it is gone or was never handed back."""
        ...

    def dismiss(self, steer_id: int | str) -> bool:
        """Drop a handed-back steer; False when it was already gone."""
        ...

    def left_by(self, owners_alive: Callable[[str | None], bool]) -> list[QueuedSteer]:
        """Queued steers whose accepting owner is not alive, oldest first."""
        ...
