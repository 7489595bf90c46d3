"""The PostgreSQL `SteerRepository` (turn_repository): accepted mid-turn steers.

A steer id comes from an identity column, so no process and no restart hands one out twice.
A steer leaves the queue only by `DELETE ... RETURNING` inside the transaction that records
where it went: of two processes claiming one steer, the second's delete waits for the first
to commit and then finds nothing, so exactly one gets the text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .pg_session_store import PgSessionStore

_STEER = "steer_id, session_id, turn_id, text, owner"


class PgSteerQueue:
    def __init__(self, store: PgSessionStore, owner: str) -> None:
        self._store = store
        self.kit = store.kit
        self.owner = owner

    @property
    def store(self) -> PgSessionStore:
        return self._store

    def _steers(self, sql: str, params: list[Any]) -> list[Any]:
        return [self.kit.QueuedSteer(int(r[0]), *r[1:]) for r in self._store.db.execute(sql, params).fetchall()]

    def enqueue(self, session_id: str, turn_id: str, text: str,
                remember: Callable[[Any, int], object] | None = None) -> int:
        with self._store.write() as handle:
            steer_id = int(self._store.db.execute(
                "insert into steer_queue (session_id, turn_id, text, owner, accepted_at) values (%s, %s, %s, %s, %s) "
                "returning steer_id", [session_id, turn_id, text, self.owner, self.kit.now_iso()]).fetchone()[0])
            if remember is not None:
                remember(handle, steer_id)
            return steer_id

    def consume(self, steer_ids: Sequence[int], record: Callable[[list[str]], object]) -> list[str]:
        if not steer_ids:
            return []
        with self._store.write() as handle:
            texts = self.claim(handle, steer_ids)
            if texts:
                record(texts)
        return texts

    def claim(self, handle: Any, steer_ids: Sequence[int]) -> list[str]:
        texts = []
        for steer_id in steer_ids:
            row = self._store.db.execute("delete from steer_queue where steer_id = %s returning text",
                                         [int(steer_id)]).fetchone()
            if row is not None:
                texts.append(str(row[0]))
        return texts

    def peek(self, steer_ids: Sequence[int]) -> list[str]:
        return [str(r[0]) for r in self._store.db.execute(
            "select text from steer_queue where steer_id = any(%s) order by steer_id",
            [[int(s) for s in steer_ids]]).fetchall()]

    def hand_back(self, steer_ids: Sequence[int], turn_id: str) -> list[int]:
        if not steer_ids:
            return []
        kept = []
        with self._store.write():
            for steer_id in steer_ids:
                if self._store.db.execute("update steer_queue set handed_back = %s where steer_id = %s",
                                          [turn_id, int(steer_id)]).rowcount == 1:
                    kept.append(steer_id)
        return kept

    def handed_back_by(self, turn_id: str) -> list[Any]:
        return self._steers(f"select {_STEER} from steer_queue where handed_back = %s order by steer_id", [turn_id])

    def undelivered_to(self, turn_id: str) -> list[Any]:
        return self._steers(f"select {_STEER} from steer_queue where turn_id = %s and (handed_back is null or "
                            "handed_back = %s) order by steer_id", [turn_id, turn_id])

    def take_handed_back(self, handle: Any, steer_id: int | str) -> str | None:
        try:
            number = int(steer_id)
        except ValueError:
            return None
        row = self._store.db.execute("delete from steer_queue where steer_id = %s and handed_back is not null "
                                     "returning text", [number]).fetchone()
        return None if row is None else str(row[0])

    def dismiss(self, steer_id: int | str) -> bool:
        with self._store.write() as handle:
            return self.take_handed_back(handle, steer_id) is not None

    def left_by(self, owners_alive: Callable[[str | None], bool]) -> list[Any]:
        return [s for s in self._steers(f"select {_STEER} from steer_queue order by steer_id", [])
                if not owners_alive(s.owner)]
