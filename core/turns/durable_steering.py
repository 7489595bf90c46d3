"""The durable half of mid-turn steering: the `steer_queue` table.

An accepted steer is committed here (synchronous=FULL) before `steer` answers ACCEPTED.
It leaves the table in exactly one of three transactions: consumed at a step boundary
together with the user transcript rows it becomes, deleted by the admission of the turn its
caller re-sends it as (or by the caller dismissing it), or turned into a queued turn (by the
lifecycle when no caller is left to take it, or by recovery after its owner died). A steer
handed back when its turn ends stays here, marked `handed_back` with that turn's id, until
one of those happens: a death at any point leaves it in exactly one place. The row
id comes from SQLite's AUTOINCREMENT, so two processes or a restart can never reuse a key.

The SQLite `SteerRepository` (turn_repository): every statement on `steer_queue` is here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.storage.store_clock import now_iso
from atomic_agent.turns.turn_states import QueuedSteer

__all__ = ["QueuedSteer", "SteerQueue"]


class SteerQueue:
    def __init__(self, store: SessionStore, owner: str) -> None:
        self.store = store
        self.owner = owner

    def enqueue(self, session_id: str, turn_id: str, text: str,
                remember: Callable[[sqlite3.Connection, int], object] | None = None) -> int:
        """Commit one accepted steer; its id orders it within the session. `remember(conn,
        steer_id)` runs in the same transaction (the caller's idempotency key); if it raises,
        nothing is queued and the error propagates."""
        with self.store.write() as conn:
            cur = conn.execute("insert into steer_queue (session_id, turn_id, text, owner, accepted_at) "
                               "values (?, ?, ?, ?, ?)", [session_id, turn_id, text, self.owner, now_iso()])
            steer_id = int(cur.lastrowid or 0)
            if remember is not None:
                remember(conn, steer_id)
            return steer_id

    def consume(self, steer_ids: Sequence[int], record: Callable[[list[str]], object]) -> list[str]:
        """Claim the steers by deleting them and call `record(texts)` in the same transaction.

        A steer another owner already claimed is skipped (its delete finds nothing); if
        `record` raises, nothing is claimed and the steers stay queued."""
        if not steer_ids:
            return []
        with self.store.write() as conn:
            texts = self.claim(conn, steer_ids)
            if texts:
                record(texts)
        return texts

    def hand_back(self, steer_ids: Sequence[int], turn_id: str) -> list[int]:
        """Mark steers handed back to the caller at the end of `turn_id` (they stay queued
        until re-sent, dismissed or requeued); the ids still present, in order."""
        if not steer_ids:
            return []
        kept = []
        with self.store.write() as conn:
            for steer_id in steer_ids:
                if conn.execute("update steer_queue set handed_back = ? where steer_id = ?",
                                [turn_id, steer_id]).rowcount == 1:
                    kept.append(steer_id)
        return kept

    def undelivered_to(self, turn_id: str) -> list[QueuedSteer]:
        """Steers accepted for `turn_id` and still queued once it ended: those it handed back,
        and those whose hand-back write the store refused (never marked), oldest first."""
        rows = self.store.conn.execute(
            "select steer_id, session_id, turn_id, text, owner from steer_queue where turn_id = ? "
            "and (handed_back is null or handed_back = ?) order by steer_id", [turn_id, turn_id]).fetchall()
        return [QueuedSteer(*r) for r in rows]

    def take_handed_back(self, conn: sqlite3.Connection, steer_id: int | str) -> str | None:
        """Delete one handed-back steer inside the caller's transaction; its text, or None when
        it is gone (re-sent, dismissed or requeued already)."""
        row = conn.execute("delete from steer_queue where steer_id = ? and handed_back is not null "
                           "returning text", [int(steer_id)]).fetchone()
        return None if row is None else str(row[0])

    def dismiss(self, steer_id: int | str) -> bool:
        """The caller dropped a handed-back steer; False when it was already gone."""
        with self.store.write() as conn:
            return self.take_handed_back(conn, steer_id) is not None

    def handed_back_by(self, turn_id: str) -> list[QueuedSteer]:
        rows = self.store.conn.execute(
            "select steer_id, session_id, turn_id, text, owner from steer_queue where handed_back = ? "
            "order by steer_id", [turn_id]).fetchall()
        return [QueuedSteer(*r) for r in rows]

    def claim(self, conn: sqlite3.Connection, steer_ids: Sequence[int]) -> list[str]:
        """Delete the steers inside the caller's transaction; the texts of those this call won."""
        texts = []
        for steer_id in steer_ids:
            row = conn.execute("delete from steer_queue where steer_id = ? returning text", [steer_id]).fetchone()
            if row is not None:
                texts.append(row[0])
        return texts

    def peek(self, steer_ids: Sequence[int]) -> list[str]:
        marks = ", ".join("?" * len(steer_ids))
        return [r[0] for r in self.store.conn.execute(
            f"select text from steer_queue where steer_id in ({marks}) order by steer_id", list(steer_ids))]

    def left_by(self, owners_alive: Callable[[str | None], bool]) -> list[QueuedSteer]:
        """Steers whose accepting owner is no longer alive, oldest first."""
        rows = self.store.conn.execute(
            "select steer_id, session_id, turn_id, text, owner from steer_queue order by steer_id").fetchall()
        return [QueuedSteer(*r) for r in rows if not owners_alive(r[4])]


class SteerAlreadyTakenError(LookupError):
    """A re-send named a handed-back steer that is no longer queued (already re-sent,
    dismissed or turned into a queued turn): nothing was admitted."""

    def __init__(self, steer_id: str) -> None:
        super().__init__(f"handed-back steer {steer_id} is no longer queued (already re-sent, dismissed or "
                         "requeued as a turn); nothing was admitted")
        self.steer_id = steer_id
