"""The PostgreSQL `TurnRepository` (turn_repository): the admission ledger and its audit.

Every state move is a compare-and-set UPDATE (`where state = ... and generation = ...`),
which PostgreSQL re-checks after waiting for a concurrent writer's lock, so of two processes
racing for one move exactly one is told it happened. What SQLite gets from its single write
lock is asked for explicitly here:
- admissions to one lane take the lane's transaction-scoped advisory lock before drawing
  their order from the sequence, so within a lane the admission order is the commit order
  (a later admission can never commit with an older number); lanes admit in parallel;
- locks are taken in one order everywhere — the lane's, then the turn's row, then the
  session's row (an append) — so two processes never wait on each other in a cycle;
- `start` takes the same lane lock and locks the turn's row (`FOR UPDATE`), so the lane rule
  (no other live turn older or running) is decided by one process at a time;
- `adopt` skips a row another process holds (`FOR UPDATE SKIP LOCKED`): that process is
  starting, withdrawing or adopting it, and this one steps aside.
"""

from __future__ import annotations

import uuid
from typing import Any

from .pg_session_store import PgSessionStore, lock_lane

CALLS_SETTLED = "open tool calls settled"
COLUMNS = ("turn_id", "session_id", "lane", "admitted_order", "state", "origin", "text", "generation",
           "turn_index", "reason", "category", "response_hash", "merged_into", "owner")
_SELECT = ", ".join(COLUMNS)


def audit(store: PgSessionStore, turn: Any, from_state: str | None, to_state: str, generation: int,
          reason: str | None, owner: str | None) -> None:
    turn_id, session_id, lane = ((turn.turn_id, turn.session_id, turn.lane) if not isinstance(turn, tuple) else turn)
    store.db.execute("insert into turn_audit (turn_id, session_id, lane, from_state, to_state, generation, reason, "
                     "owner, at) values (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                     [turn_id, session_id, lane, from_state, to_state, generation, reason, owner, store.kit.now_iso()])


class PgTurnLedger:
    def __init__(self, store: PgSessionStore, owner: str) -> None:
        self._store = store
        self.kit = store.kit
        self.owner = owner

    @property
    def store(self) -> PgSessionStore:
        return self._store

    def _record(self, row: Any) -> Any:
        return self.kit.TurnRecord(*row)

    def _rows(self, sql: str, params: list[Any]) -> list[Any]:
        return [self._record(r) for r in self._store.db.execute(sql, params).fetchall()]

    # -- reads ------------------------------------------------------------------------------
    def get(self, turn_id: str) -> Any:
        row = self._store.db.execute(f"select {_SELECT} from turns where turn_id = %s", [turn_id]).fetchone()
        return None if row is None else self._record(row)

    def lane(self, lane: str, states: tuple[str, ...] | None = None) -> list[Any]:
        if states:
            return self._rows(f"select {_SELECT} from turns where lane = %s and state = any(%s) "
                              "order by admitted_order", [lane, list(states)])
        return self._rows(f"select {_SELECT} from turns where lane = %s order by admitted_order", [lane])

    def in_state(self, *states: str) -> list[Any]:
        return self._rows(f"select {_SELECT} from turns where state = any(%s) order by admitted_order", [list(states)])

    def has_live_turn(self, lane: str) -> bool:
        return self._store.db.execute("select 1 from turns where lane = %s and state = any(%s) limit 1",
                                      [lane, list(self.kit.LIVE_STATES)]).fetchone() is not None

    def unsettled_interruptions(self) -> list[Any]:
        return self._rows(
            f"select {_SELECT} from turns t where state = 'interrupted' and not exists (select 1 from turn_audit a "
            "where a.turn_id = t.turn_id and a.reason = %s) order by admitted_order", [CALLS_SETTLED])

    def mark_settled(self, turn: Any) -> None:
        with self._store.write():
            audit(self._store, turn, turn.state, turn.state, turn.generation, CALLS_SETTLED, self.owner)

    def audit_rows(self, turn_id: str | None = None) -> list[dict[str, Any]]:
        sql = ("select turn_id, session_id, lane, from_state, to_state, generation, reason, owner, at, audit_id "
               "from turn_audit" + (" where turn_id = %s" if turn_id else "") + " order by audit_id")
        cursor = self._store.db.execute(sql, [turn_id] if turn_id else [])
        cols = [d.name for d in cursor.description]
        return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]

    def turn_for_key(self, key: str) -> Any:
        row = self._store.db.execute("select key, turn_id, session_id, fingerprint, caller_ref from idempotency_keys "
                                     "where key = %s", [key]).fetchone()
        return None if row is None else self.kit.KeyedTurn(*row)

    # -- transitions ------------------------------------------------------------------------
    def remember_key_in(self, handle: Any, request_key: Any, turn_id: str, session_id: str) -> None:
        inserted = self._store.db.execute(
            "insert into idempotency_keys (key, turn_id, session_id, fingerprint, caller_ref, created_at) "
            "values (%s, %s, %s, %s, %s, %s) on conflict (key) do nothing",
            [request_key.key, turn_id, session_id, request_key.fingerprint, request_key.caller_ref,
             self.kit.now_iso()]).rowcount
        if inserted != 1:  # the key names a turn already (committed by any process): nothing written here
            existing = self.turn_for_key(request_key.key)
            raise self.kit.DuplicateRequestError(existing)

    def rebind_steer_key_in(self, handle: Any, steer_id: int | str, turn_id: str) -> None:
        self._store.db.execute("update idempotency_keys set turn_id = %s where caller_ref = %s",
                               [turn_id, self.kit.steer_key_ref(steer_id)])

    def admit(self, session_id: str, text: str, origin: str, lane: str | None = None,
              turn_id: str | None = None) -> Any:
        lane = lane or session_id
        turn_id = turn_id or uuid.uuid4().hex
        with self._store.write() as handle:
            return self.admit_in(handle, session_id, text, origin, lane, turn_id)

    def admit_in(self, handle: Any, session_id: str, text: str, origin: str, lane: str, turn_id: str) -> Any:
        db = self._store.db
        # the lane lock before the session row: the order `start` takes them in (lane, turn, session
        # row), so an admission and a start of one lane never wait on each other in a cycle
        lock_lane(self._store.db, lane)
        if db.execute("select 1 from sessions where id = %s for share", [session_id]).fetchone() is None:
            raise self.kit.SessionNotFoundError(session_id)
        order = int(db.execute("select nextval('turn_admission_order')").fetchone()[0])
        ahead = int(db.execute("select count(*) from turns where lane = %s and state = any(%s)",
                               [lane, list(self.kit.LIVE_STATES)]).fetchone()[0])
        db.execute("insert into turns (turn_id, session_id, lane, admitted_order, state, origin, text, generation, "
                   "owner, admitted_at) values (%s, %s, %s, %s, %s, %s, %s, 0, %s, %s)",
                   [turn_id, session_id, lane, order, self.kit.QUEUED, origin, text, self.owner, self.kit.now_iso()])
        audit(self._store, (turn_id, session_id, lane), None, self.kit.QUEUED, 0, origin, self.owner)
        return self.kit.TurnTicket(turn_id, session_id, lane, order, ahead, text, origin)

    def requeue_in(self, handle: Any, session_id: str, text: str, origin: str, lane: str, why: str,
                   owner: str | None) -> Any:
        ticket = self.admit_in(handle, session_id, text, origin, lane, uuid.uuid4().hex)
        audit(self._store, (ticket.turn_id, ticket.session_id, ticket.lane), self.kit.QUEUED, self.kit.QUEUED, 0,
              why, self.owner)
        self._store.db.execute("update turns set owner = %s where turn_id = %s", [owner, ticket.turn_id])
        return ticket

    def start(self, turn_id: str, session: Any, send_mode: str = "one-at-a-time") -> Any:
        kit, db = self.kit, self._store.db
        with self._store.write():
            turn = self.get(turn_id)
            if turn is None or turn.state != kit.QUEUED:
                return None
            lock_lane(self._store.db, turn.lane)
            row = db.execute(f"select {_SELECT} from turns where turn_id = %s for update", [turn_id]).fetchone()
            turn = None if row is None else self._record(row)
            if turn is None or turn.state != kit.QUEUED:
                return None
            blocker = self._blocker(turn)
            if blocker is not None:
                return kit.LaneBusy(blocker)
            self._store.catch_up(session)
            generation = turn.generation + 1
            index = session.next_turn_index
            db.execute("update turns set state = %s, generation = %s, turn_index = %s, owner = %s, started_at = %s "
                       "where turn_id = %s and state = %s",
                       [kit.RUNNING, generation, index, self.owner, kit.now_iso(), turn_id, kit.QUEUED])
            audit(self._store, turn, kit.QUEUED, kit.RUNNING, generation, None, self.owner)
            merged: list[tuple[str, str]] = []
            if send_mode == "all":
                for other in self._rows(f"select {_SELECT} from turns where lane = %s and state = %s "
                                        "order by admitted_order for update", [turn.lane, kit.QUEUED]):
                    db.execute("update turns set state = %s, merged_into = %s, turn_index = %s, finished_at = %s "
                               "where turn_id = %s and state = %s",
                               [kit.MERGED, turn_id, index, kit.now_iso(), other.turn_id, kit.QUEUED])
                    audit(self._store, other, kit.QUEUED, kit.MERGED, other.generation, f"merged into {turn_id}",
                          self.owner)
                    merged.append((other.turn_id, other.text))
            guard = kit.TurnGuard(turn_id, generation)
            own = [] if turn.origin == kit.CONTINUATION_ORIGIN else [kit.TranscriptEntry(kit.USER, index,
                                                                                          text=turn.text)]
            opening = [kit.TranscriptEntry(kit.TURN_STARTED, index), *own,
                       *(kit.TranscriptEntry(kit.USER, index, text=text) for _, text in merged)]
            self._store.append(session, opening, guard=guard)
        return kit.StartedTurn(guard, index, tuple(merged))

    def _blocker(self, turn: Any) -> Any:
        db = self._store.db
        # a parked turn holds its lane like a running one until it is resumed
        row = db.execute(f"select {_SELECT} from turns where lane = %s and state = any(%s) and turn_id != %s "
                         "order by admitted_order limit 1",
                         [turn.lane, [self.kit.RUNNING, self.kit.PARKED], turn.turn_id]).fetchone()
        if row is None:
            row = db.execute(f"select {_SELECT} from turns where lane = %s and state = %s and admitted_order < %s "
                             "and turn_id != %s order by admitted_order limit 1",
                             [turn.lane, self.kit.QUEUED, turn.admitted_order, turn.turn_id]).fetchone()
        return None if row is None else self._record(row)

    def adopt(self, turn: Any, reason: str) -> bool:
        with self._store.write():
            row = self._store.db.execute(
                "select 1 from turns where turn_id = %s and state = %s and owner is not distinct from %s "
                "for update skip locked", [turn.turn_id, self.kit.QUEUED, turn.owner]).fetchone()
            if row is None:  # gone, moved, or held by a process that is starting or adopting it now
                return False
            self._store.db.execute("update turns set owner = %s where turn_id = %s", [self.owner, turn.turn_id])
            audit(self._store, turn, self.kit.QUEUED, self.kit.QUEUED, turn.generation, reason, self.owner)
            return True

    def finalize(self, guard: Any, session: Any, rows: list[Any], state: str, reason: str | None,
                 category: str | None, visible_reply: str) -> None:
        kit = self.kit
        with self._store.write() as handle:
            self._store.check_fence(handle, guard)
            if rows:
                self._store.append(session, rows, guard=guard)
            self._store.db.execute(
                "update turns set state = %s, reason = %s, category = %s, response_hash = %s, finished_at = %s "
                "where turn_id = %s and generation = %s and state = %s",
                [state, reason, category, kit.response_hash(visible_reply), kit.now_iso(), guard.turn_id,
                 guard.generation, kit.RUNNING])
            turn = self.get(guard.turn_id)
            audit(self._store, turn, kit.RUNNING, state, guard.generation, reason, self.owner)

    def interrupt_in(self, handle: Any, turn: Any, reason: str) -> bool:
        kit = self.kit
        moved = self._store.db.execute(
            "update turns set state = %s, generation = generation + 1, reason = %s, finished_at = %s "
            "where turn_id = %s and state = %s and generation = %s",
            [kit.INTERRUPTED, reason, kit.now_iso(), turn.turn_id, kit.RUNNING, turn.generation]).rowcount
        if moved != 1:
            return False
        audit(self._store, turn, kit.RUNNING, kit.INTERRUPTED, turn.generation + 1, reason, self.owner)
        return True

    def park_in(self, handle: Any, turn: Any, reason: str) -> bool:
        kit = self.kit
        fenced = self._store.db.execute(
            "update turns set state = %s, generation = generation + 1, reason = %s, owner = %s "
            "where turn_id = %s and state = %s and generation = %s",
            [kit.PARKED, reason, self.owner, turn.turn_id, kit.RUNNING, turn.generation]).rowcount
        if fenced != 1:
            return False
        audit(self._store, turn, kit.RUNNING, kit.PARKED, turn.generation + 1, reason, self.owner)
        return True

    def claim_parked(self, turn: Any, reason: str) -> bool:
        kit = self.kit
        with self._store.write():
            taken = self._store.db.execute(
                "update turns set owner = %s where turn_id = %s and state = %s and owner is not distinct from %s",
                [self.owner, turn.turn_id, kit.PARKED, turn.owner]).rowcount
            if taken == 1:
                audit(self._store, turn, kit.PARKED, kit.PARKED, turn.generation, reason, self.owner)
            return bool(taken == 1)

    def resume_parked(self, turn: Any, reason: str, rows: list[Any]) -> bool:
        kit = self.kit
        with self._store.write():
            moved = self._store.db.execute(
                "update turns set state = %s, reason = %s, finished_at = %s where turn_id = %s and state = %s "
                "and owner = %s", [kit.RESUMED, reason, kit.now_iso(), turn.turn_id, kit.PARKED, self.owner]).rowcount
            if moved != 1:
                return False
            audit(self._store, turn, kit.PARKED, kit.RESUMED, turn.generation, reason, self.owner)
            if rows:
                try:
                    self._store.append(self._store.load(turn.session_id), rows)
                except kit.SessionNotFoundError:
                    pass  # the session was deleted meanwhile: there is no conversation to close
            return True

    def interrupt_unfinalized(self, guard: Any, reason: str) -> bool:
        kit = self.kit
        with self._store.write():
            turn = self.get(guard.turn_id)
            moved = self._store.db.execute(
                "update turns set state = %s, generation = generation + 1, reason = %s, finished_at = %s "
                "where turn_id = %s and generation = %s and state = %s",
                [kit.INTERRUPTED, reason, kit.now_iso(), guard.turn_id, guard.generation, kit.RUNNING]).rowcount
            if moved != 1 or turn is None:
                return False
            audit(self._store, turn, kit.RUNNING, kit.INTERRUPTED, guard.generation + 1, reason, self.owner)
            return True

    def _queued_to(self, turn_id: str, state: str, reason: str) -> bool:
        kit = self.kit
        with self._store.write():
            row = self._store.db.execute(f"select {_SELECT} from turns where turn_id = %s and state = %s for update",
                                         [turn_id, kit.QUEUED]).fetchone()
            if row is None:
                return False
            turn = self._record(row)
            self._store.db.execute("update turns set state = %s, reason = %s, finished_at = %s where turn_id = %s",
                                   [state, reason, kit.now_iso(), turn_id])
            audit(self._store, turn, kit.QUEUED, state, turn.generation, reason, self.owner)
            return True

    def interrupt_queued(self, turn_id: str, reason: str) -> bool:
        return self._queued_to(turn_id, self.kit.INTERRUPTED, reason)

    def cancel_queued(self, turn_id: str, reason: str) -> bool:
        return self._queued_to(turn_id, self.kit.CANCELLED, reason)
