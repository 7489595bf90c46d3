"""The admission ledger in sessions.sqlite: every turn's state, and an audit row per transition.

The SQLite `TurnRepository` (turn_repository): every statement on `turns`, `turn_counters` and
`turn_audit` is here. Each method is one BEGIN IMMEDIATE transaction on the session store's
connection (which runs with synchronous=FULL), so when a method returns, what it says
happened is on disk: a caller may tell the user a turn exists once `admit` returned, not before.
"""

from __future__ import annotations

import sqlite3
import uuid
from typing import Any

from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.store_errors import SessionNotFoundError
from atomic_agent.sessions.transcript_entry import TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard
from atomic_agent.storage.store_clock import now_iso
from atomic_agent.turns.request_keys import DuplicateRequestError, KeyedTurn, RequestKey, steer_key_ref
from atomic_agent.turns.turn_states import (
    CANCELLED,
    CONTINUATION_ORIGIN,
    INTERRUPTED,
    LANE_HOLDERS,
    LIVE_STATES,
    MERGED,
    PARKED,
    QUEUED,
    RESUMED,
    RUNNING,
    LaneBusy,
    StartedTurn,
    TurnRecord,
    TurnTicket,
    response_hash,
)

CALLS_SETTLED = "open tool calls settled"
_COLUMNS = ", ".join(f.name for f in TurnRecord.__attrs_attrs__)


def audit(conn: sqlite3.Connection, turn: TurnRecord | tuple[str, str, str], from_state: str | None,
          to_state: str, generation: int, reason: str | None, owner: str | None) -> None:
    """Append one transition to `turn_audit` (inside the caller's transaction)."""
    turn_id, session_id, lane = ((turn.turn_id, turn.session_id, turn.lane) if isinstance(turn, TurnRecord)
                                 else turn)
    conn.execute("insert into turn_audit (turn_id, session_id, lane, from_state, to_state, generation, reason, "
                 "owner, at) values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                 [turn_id, session_id, lane, from_state, to_state, generation, reason, owner, now_iso()])


class TurnLedger:
    """Admission, start, finalization and lookups of turns; `owner` names this process."""

    def __init__(self, store: SessionStore, owner: str) -> None:
        self.store = store
        self.owner = owner

    @property
    def conn(self) -> sqlite3.Connection:
        return self.store.conn

    # -- reads ------------------------------------------------------------------------------
    def get(self, turn_id: str) -> TurnRecord | None:
        row = self.conn.execute(f"select {_COLUMNS} from turns where turn_id = ?", [turn_id]).fetchone()
        return None if row is None else TurnRecord(*row)

    def lane(self, lane: str, states: tuple[str, ...] | None = None) -> list[TurnRecord]:
        """The lane's turns in admission order (optionally only those in `states`)."""
        sql, args = f"select {_COLUMNS} from turns where lane = ?", [lane]
        if states:
            sql += f" and state in ({', '.join('?' * len(states))})"
            args += list(states)
        return [TurnRecord(*r) for r in self.conn.execute(sql + " order by admitted_order", args)]

    def in_state(self, *states: str) -> list[TurnRecord]:
        rows = self.conn.execute(f"select {_COLUMNS} from turns where state in ({', '.join('?' * len(states))}) "
                                 "order by admitted_order", list(states))
        return [TurnRecord(*r) for r in rows]

    def has_live_turn(self, lane: str) -> bool:
        marks = ", ".join("?" * len(LIVE_STATES))
        return self.conn.execute(f"select 1 from turns where lane = ? and state in ({marks}) limit 1",
                                 [lane, *LIVE_STATES]).fetchone() is not None

    def unsettled_interruptions(self) -> list[TurnRecord]:
        """Interrupted turns whose open tool calls were not yet settled (see `mark_settled`)."""
        rows = self.conn.execute(
            f"select {_COLUMNS} from turns t where state = 'interrupted' and not exists (select 1 from turn_audit a "
            f"where a.turn_id = t.turn_id and a.reason = ?) order by admitted_order", [CALLS_SETTLED])
        return [TurnRecord(*r) for r in rows]

    def mark_settled(self, turn: TurnRecord) -> None:
        """Record, in the audit, that an interrupted turn owes no tool result any more."""
        with self.store.write() as conn:
            audit(conn, turn, turn.state, turn.state, turn.generation, CALLS_SETTLED, self.owner)

    def audit_rows(self, turn_id: str | None = None) -> list[dict[str, Any]]:
        sql = "select * from turn_audit" + (" where turn_id = ?" if turn_id else "") + " order by audit_id"
        cur = self.conn.execute(sql, [turn_id] if turn_id else [])
        cols = [d[0] for d in cur.description]
        return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

    def turn_for_key(self, key: str) -> KeyedTurn | None:
        row = self.conn.execute("select key, turn_id, session_id, fingerprint, caller_ref from idempotency_keys "
                                "where key = ?", [key]).fetchone()
        return None if row is None else KeyedTurn(*row)

    # -- transitions ------------------------------------------------------------------------
    def remember_key_in(self, conn: sqlite3.Connection, request_key: RequestKey, turn_id: str,
                        session_id: str) -> None:
        """Inside the admission's transaction: `request_key` names `turn_id` from now on;
        DuplicateRequestError (the caller rolls back) when the key already names a turn."""
        existing = self.turn_for_key(request_key.key)
        if existing is not None:
            raise DuplicateRequestError(existing)
        conn.execute("insert into idempotency_keys (key, turn_id, session_id, fingerprint, caller_ref, created_at) "
                     "values (?, ?, ?, ?, ?, ?)", [request_key.key, turn_id, session_id, request_key.fingerprint,
                                                   request_key.caller_ref, now_iso()])

    def rebind_steer_key_in(self, conn: sqlite3.Connection, steer_id: int | str, turn_id: str) -> None:
        conn.execute("update idempotency_keys set turn_id = ? where caller_ref = ?", [turn_id, steer_key_ref(steer_id)])

    def admit(self, session_id: str, text: str, origin: str, lane: str | None = None,
              turn_id: str | None = None) -> TurnTicket:
        """Persist the message and its queued turn; durable when this returns."""
        lane = lane or session_id
        turn_id = turn_id or uuid.uuid4().hex
        with self.store.write() as conn:
            return self.admit_in(conn, session_id, text, origin, lane, turn_id)

    def admit_in(self, conn: sqlite3.Connection, session_id: str, text: str, origin: str, lane: str,
                  turn_id: str) -> TurnTicket:
        """`admit` inside the caller's transaction (recovery admits a steer as it claims it)."""
        if conn.execute("select 1 from sessions where id = ?", [session_id]).fetchone() is None:
            raise SessionNotFoundError(session_id)
        # the order comes from a counter in the file: a restarted process continues after it
        order = conn.execute("insert into turn_counters (name, value) values ('admission', 1) on conflict(name) "
                             "do update set value = value + 1 returning value").fetchone()[0]
        ahead = conn.execute(f"select count(*) from turns where lane = ? and state in ({', '.join('?' * len(LIVE_STATES))})",
                             [lane, *LIVE_STATES]).fetchone()[0]
        conn.execute("insert into turns (turn_id, session_id, lane, admitted_order, state, origin, text, generation, "
                     "owner, admitted_at) values (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                     [turn_id, session_id, lane, order, QUEUED, origin, text, self.owner, now_iso()])
        audit(conn, (turn_id, session_id, lane), None, QUEUED, 0, origin, self.owner)
        return TurnTicket(turn_id, session_id, lane, order, ahead, text, origin)

    def requeue_in(self, conn: sqlite3.Connection, session_id: str, text: str, origin: str, lane: str, why: str,
                   owner: str | None) -> TurnTicket:
        """A steer that was never delivered becomes a queued turn of `owner`, in the caller's transaction."""
        ticket = self.admit_in(conn, session_id, text, origin, lane, uuid.uuid4().hex)
        audit(conn, (ticket.turn_id, ticket.session_id, ticket.lane), QUEUED, QUEUED, 0, why, self.owner)
        conn.execute("update turns set owner = ? where turn_id = ?", [owner, ticket.turn_id])
        return ticket

    def start(self, turn_id: str, session: SessionState,
              send_mode: str = "one-at-a-time") -> StartedTurn | LaneBusy | None:
        """queued -> running with a new generation, writing the turn's opening transcript rows
        in the same transaction; None when the turn is no longer queued (merged, cancelled).

        A turn starts only as the oldest live turn of its lane across every owner: while
        another turn of the lane runs (in any process) or an older one is still queued, it
        stays queued and LaneBusy names the blocker. The check is inside this transaction,
        so two owners can never both start a turn of one lane.

        With sendMode `all` every other queued turn of the lane is claimed here (merged) and its
        text joins the opening rows in admission order, so a crash leaves each message either
        still queued or in the conversation — never both, never neither."""
        with self.store.write() as conn:
            turn = self.get(turn_id)
            if turn is None or turn.state != QUEUED:
                return None
            blocker = self._blocker(turn)
            if blocker is not None:
                return LaneBusy(blocker)
            # re-read inside the write lock: another owner may have appended since the caller loaded
            self.store.catch_up(session)
            generation = turn.generation + 1
            index = session.next_turn_index
            conn.execute("update turns set state = ?, generation = ?, turn_index = ?, owner = ?, started_at = ? "
                         "where turn_id = ? and state = ?",
                         [RUNNING, generation, index, self.owner, now_iso(), turn_id, QUEUED])
            audit(conn, turn, QUEUED, RUNNING, generation, None, self.owner)
            merged: list[tuple[str, str]] = []
            if send_mode == "all":
                for other in self.lane(turn.lane, (QUEUED,)):
                    conn.execute("update turns set state = ?, merged_into = ?, turn_index = ?, finished_at = ? "
                                 "where turn_id = ? and state = ?",
                                 [MERGED, turn_id, index, now_iso(), other.turn_id, QUEUED])
                    audit(conn, other, QUEUED, MERGED, other.generation, f"merged into {turn_id}", self.owner)
                    merged.append((other.turn_id, other.text))
            guard = TurnGuard(turn_id, generation)
            # a continuation answers the durable conversation: it has no user message of its own
            own = [] if turn.origin == CONTINUATION_ORIGIN else [TranscriptEntry(USER, index, text=turn.text)]
            opening = [TranscriptEntry(TURN_STARTED, index), *own,
                       *(TranscriptEntry(USER, index, text=text) for _, text in merged)]
            self.store.append(session, opening, guard=guard)
        return StartedTurn(guard, index, tuple(merged))

    def _blocker(self, turn: TurnRecord) -> TurnRecord | None:
        """The live turn of `turn`'s lane that must finish first: a running or parked one (a
        parked turn keeps its lane until it is resumed), else the oldest queued one admitted
        before it (whoever owns either)."""
        # seeks on turns_by_lane (lane, state, admitted_order), one per state: a query with
        # `state = ? or (...)` read every turn the lane ever had, a cost that grew with the
        # session, and `state in (...)` sorts the matches to order them
        row = None
        for holder in LANE_HOLDERS:
            row = self.conn.execute(f"select {_COLUMNS} from turns where lane = ? and state = ? and turn_id != ? "
                                    "order by admitted_order limit 1", [turn.lane, holder, turn.turn_id]).fetchone()
            if row is not None:
                break
        if row is None:
            row = self.conn.execute(
                f"select {_COLUMNS} from turns where lane = ? and state = ? and admitted_order < ? "
                "and turn_id != ? order by admitted_order limit 1",
                [turn.lane, QUEUED, turn.admitted_order, turn.turn_id]).fetchone()
        return None if row is None else TurnRecord(*row)

    def adopt(self, turn: TurnRecord, reason: str) -> bool:
        """Take over a queued turn of a dead owner (compare-and-set on its owner); False when
        someone else adopted, started or withdrew it first."""
        with self.store.write() as conn:
            taken = conn.execute("update turns set owner = ? where turn_id = ? and state = ? and owner is ?",
                                 [self.owner, turn.turn_id, QUEUED, turn.owner]).rowcount
            if taken == 1:  # a change of owner, not of state; the audit still records who took it
                audit(conn, turn, QUEUED, QUEUED, turn.generation, reason, self.owner)
            return taken == 1

    def finalize(self, guard: TurnGuard, session: SessionState, rows: list[TranscriptEntry], state: str,
                 reason: str | None, category: str | None, visible_reply: str) -> None:
        """running -> a final state, with the turn's closing rows, in one transaction.

        Refused with StaleWriterError (and nothing written) unless `guard` is still the
        running generation; the response hash is frozen with the state."""
        with self.store.write() as conn:
            self.store.check_fence(conn, guard)
            if rows:
                self.store.append(session, rows, guard=guard)
            conn.execute("update turns set state = ?, reason = ?, category = ?, response_hash = ?, finished_at = ? "
                         "where turn_id = ? and generation = ? and state = ?",
                         [state, reason, category, response_hash(visible_reply), now_iso(), guard.turn_id,
                          guard.generation, RUNNING])
            turn = self.get(guard.turn_id)
            assert turn is not None  # the guard check just read it
            audit(conn, turn, RUNNING, state, guard.generation, reason, self.owner)

    def interrupt_in(self, conn: sqlite3.Connection, turn: TurnRecord, reason: str) -> bool:
        """running -> interrupted at `turn.generation` (bumped), in the caller's transaction."""
        fenced = conn.execute("update turns set state = ?, generation = generation + 1, reason = ?, "
                              "finished_at = ? where turn_id = ? and state = ? and generation = ?",
                              [INTERRUPTED, reason, now_iso(), turn.turn_id, RUNNING, turn.generation])
        if fenced.rowcount != 1:
            return False
        audit(conn, turn, RUNNING, INTERRUPTED, turn.generation + 1, reason, self.owner)
        return True

    def park_in(self, conn: sqlite3.Connection, turn: TurnRecord, reason: str) -> bool:
        """running -> parked at `turn.generation` (bumped, so the dead writer is fenced out),
        owned by this process from now on, in the caller's transaction; False when it moved."""
        fenced = conn.execute("update turns set state = ?, generation = generation + 1, reason = ?, owner = ? "
                              "where turn_id = ? and state = ? and generation = ?",
                              [PARKED, reason, self.owner, turn.turn_id, RUNNING, turn.generation])
        if fenced.rowcount != 1:
            return False
        audit(conn, turn, RUNNING, PARKED, turn.generation + 1, reason, self.owner)
        return True

    def claim_parked(self, turn: TurnRecord, reason: str) -> bool:
        """Take over a parked turn whose owner died (compare-and-set on its owner); False when
        another process claimed or resumed it first."""
        with self.store.write() as conn:
            taken = conn.execute("update turns set owner = ? where turn_id = ? and state = ? and owner is ?",
                                 [self.owner, turn.turn_id, PARKED, turn.owner]).rowcount
            if taken == 1:
                audit(conn, turn, PARKED, PARKED, turn.generation, reason, self.owner)
            return taken == 1

    def resume_parked(self, turn: TurnRecord, reason: str, rows: list[TranscriptEntry]) -> bool:
        """parked -> resumed (final) with `rows` (its closing transcript rows) in one
        transaction, only by its owner; False when it is not parked and owned by this process."""
        with self.store.write() as conn:
            moved = conn.execute("update turns set state = ?, reason = ?, finished_at = ? where turn_id = ? and "
                                 "state = ? and owner = ?",
                                 [RESUMED, reason, now_iso(), turn.turn_id, PARKED, self.owner]).rowcount
            if moved != 1:
                return False
            audit(conn, turn, PARKED, RESUMED, turn.generation, reason, self.owner)
            if rows:
                try:
                    self.store.append(self.store.load(turn.session_id), rows)
                except SessionNotFoundError:
                    pass  # the session was deleted meanwhile: there is no conversation to close
            return True

    def interrupt_unfinalized(self, guard: TurnGuard, reason: str) -> bool:
        """running -> interrupted for a turn whose own finalize could not be written (a full
        disk): only the ledger row and its audit, no transcript rows, so the lane is free again
        and a restart answers what the turn owed. False if the turn is no longer running."""
        with self.store.write() as conn:
            turn = self.get(guard.turn_id)
            moved = conn.execute("update turns set state = ?, generation = generation + 1, reason = ?, "
                                 "finished_at = ? where turn_id = ? and generation = ? and state = ?",
                                 [INTERRUPTED, reason, now_iso(), guard.turn_id, guard.generation, RUNNING]).rowcount
            if moved != 1 or turn is None:
                return False
            audit(conn, turn, RUNNING, INTERRUPTED, guard.generation + 1, reason, self.owner)
            return True

    def interrupt_queued(self, turn_id: str, reason: str) -> bool:
        """queued -> interrupted for a turn that could not start because its store failed (a
        damaged page, a full disk): settled, not left queued for ever; False if not queued."""
        with self.store.write() as conn:
            turn = self.get(turn_id)
            if turn is None or turn.state != QUEUED:
                return False
            conn.execute("update turns set state = ?, reason = ?, finished_at = ? where turn_id = ? and state = ?",
                         [INTERRUPTED, reason, now_iso(), turn_id, QUEUED])
            audit(conn, turn, QUEUED, INTERRUPTED, turn.generation, reason, self.owner)
            return True

    def cancel_queued(self, turn_id: str, reason: str) -> bool:
        """queued -> cancelled for a submission withdrawn before it ran; False if it was not queued."""
        with self.store.write() as conn:
            turn = self.get(turn_id)
            if turn is None or turn.state != QUEUED:
                return False
            conn.execute("update turns set state = ?, reason = ?, finished_at = ? where turn_id = ? and state = ?",
                         [CANCELLED, reason, now_iso(), turn_id, QUEUED])
            audit(conn, turn, QUEUED, CANCELLED, turn.generation, reason, self.owner)
            return True
