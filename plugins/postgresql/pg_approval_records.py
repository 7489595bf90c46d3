"""Approval and question records in the fleet's PostgreSQL database (`approval_records`,
schema step m005_approvals): the core's ApprovalRepository with the embedded file's
invariants, held across every host of the fleet.

A record is committed (synchronously) before `create` returns, so a surface on any host can
show and answer it. Answering is one conditional UPDATE (`state = 'pending'` and not yet
due): when two hosts answer at once the second UPDATE waits on the first one's row lock and
then finds the row no longer pending, so exactly one wins and the other is told who did.
`consume` is one conditional UPDATE too, so an approved call runs at most once fleet-wide.

Every time that decides (expiry, the answer's and the use's timestamps) is the database's
`clock_timestamp()` in epoch seconds, never a host's clock: a host whose clock runs ahead or
behind can neither cut an approval short nor answer one past its expiry. Validating an
answer, mapping rows and telling the loser are the core's (session_backend_kit's
approval_records), the same functions the embedded file uses.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from .approval_notices import ApprovalNotices
from .shared_database import SharedDatabase

NOW = "extract(epoch from clock_timestamp())::float8"  # the database's clock, epoch seconds
# while the database's notices reach this process a waiter still reads its record this often:
# a safety net only, every settle wakes it at once
NOTICED_POLL_S = 5.0


class PgApprovalRecords:
    def __init__(self, database: SharedDatabase, kit: Any, notices: ApprovalNotices | None = None) -> None:
        self.db = database
        self.kit = kit
        self.notices = notices
        self.rules = kit.approval_records  # the record, its errors and the backend-neutral rules

    # -- writing -------------------------------------------------------------------------
    def create(self, *, kind: str, session_id: str, category: str, level: int, summary: str, frozen: Any,
               ttl_s: float, turn_id: str | None = None, call_key: str | None = None,
               answerers: Sequence[str] = (), question: Mapping[str, Any] | None = None) -> Any:
        """Commit a pending record; only after this returns may a surface show it."""
        with self.db.transaction() as conn:
            now = conn.execute(f"SELECT {NOW}").fetchone()[0]
            record = self.rules.new_record(kind=kind, session_id=session_id, category=category, level=level,
                                           summary=summary, frozen=frozen, now=now, ttl_s=ttl_s, turn_id=turn_id,
                                           call_key=call_key, answerers=answerers, question=question)
            conn.execute(f"INSERT INTO approval_records ({self.rules.COLUMNS}, fingerprint) VALUES "
                         f"({', '.join(['%s'] * 22)})", self.rules.insert_values(record))
        return record

    def answer(self, approval_id: str, decision: str, *, principal: str, surface: str,
               fingerprint: str | None = None, text: str | None = None) -> Any:
        """Settle a pending record with the first valid answer from any host; every later one raises."""
        state = self.rules.answer_state(self.get(approval_id), decision, principal=principal,
                                        fingerprint=fingerprint, text=text)
        with self.db.transaction() as conn:
            won = conn.execute(
                f"UPDATE approval_records SET state = %s, decision = %s, answer_text = %s, answered_by = %s, "
                f"surface = %s, answered_at = {NOW} WHERE id = %s AND state = %s AND expires_at > {NOW} "
                "AND schema <= %s",
                [state, decision, text, principal, surface, approval_id, self.rules.PENDING,
                 self.rules.RECORD_SCHEMA]).rowcount == 1
            if not won:
                self._expire_in(conn)
        if won:
            return self.get(approval_id)
        raise self.rules.lost_answer(self.get(approval_id))

    def consume(self, approval_id: str) -> bool:
        """True exactly once fleet-wide per approved record; any other settled record is
        marked acted on (nothing to resume)."""
        rules = self.rules
        with self.db.transaction() as conn:
            won = conn.execute(f"UPDATE approval_records SET used_at = {NOW} WHERE id = %s AND state IN (%s, %s) "
                               "AND used_at IS NULL", [approval_id, rules.APPROVED, rules.GRANTED]).rowcount == 1
            if not won:
                conn.execute(f"UPDATE approval_records SET used_at = {NOW} WHERE id = %s AND state NOT IN "
                             "(%s, %s, %s) AND used_at IS NULL",
                             [approval_id, rules.PENDING, rules.APPROVED, rules.GRANTED])
        return won

    def cancel(self, approval_id: str, why: str) -> bool:
        """Withdraw a pending record (its call changed, or it is no longer needed)."""
        with self.db.transaction() as conn:
            return bool(conn.execute(
                f"UPDATE approval_records SET state = %s, answer_text = %s, answered_at = {NOW} WHERE id = %s "
                "AND state = %s", [self.rules.CANCELLED, why, approval_id, self.rules.PENDING]).rowcount == 1)

    def expire(self, approval_id: str) -> bool:
        """Settle one pending record as expired now (its host's own timeout passed first)."""
        with self.db.transaction() as conn:
            return bool(conn.execute(
                f"UPDATE approval_records SET state = %s, answered_at = {NOW} WHERE id = %s AND state = %s",
                [self.rules.EXPIRED, approval_id, self.rules.PENDING]).rowcount == 1)

    def expire_due(self) -> list[str]:
        """Settle every pending record past its expiry (the database's clock) as expired; their ids."""
        with self.db.transaction() as conn:
            return self._expire_in(conn)

    def _expire_in(self, conn: Any) -> list[str]:
        rows = conn.execute(f"UPDATE approval_records SET state = %s, answered_at = {NOW} WHERE state = %s AND "
                            f"expires_at <= {NOW} AND schema <= %s RETURNING id",
                            [self.rules.EXPIRED, self.rules.PENDING, self.rules.RECORD_SCHEMA]).fetchall()
        return [r[0] for r in rows]

    # -- reading -------------------------------------------------------------------------
    def _get_with_now(self, approval_id: str) -> tuple[Any, float]:
        with self.db.connection() as conn:
            row = conn.execute(f"SELECT {self.rules.COLUMNS}, {NOW} FROM approval_records WHERE id = %s",
                               [approval_id]).fetchone()
        if row is None:
            raise self.rules.ApprovalNotFoundError(approval_id, f"no approval or question {approval_id!r}; "
                                                                "`atomic-agent approvals list` shows them")
        return self.rules.record_of(row[:-1]), float(row[-1])

    def get(self, approval_id: str) -> Any:
        return self._get_with_now(approval_id)[0]

    def find(self, states: Sequence[str] = (), limit: int = 200) -> list[Any]:
        """Newest first; only `states` when given."""
        where = "WHERE state = ANY(%s)" if states else ""
        with self.db.connection() as conn:
            rows = conn.execute(f"SELECT {self.rules.COLUMNS} FROM approval_records {where} "
                                "ORDER BY created_at DESC, id LIMIT %s",
                                [list(states), limit] if states else [limit]).fetchall()
        return [self.rules.record_of(r) for r in rows]

    def pending_now(self, limit: int = 200) -> list[Any]:
        """Pending records not yet due by the database's clock, newest first."""
        with self.db.connection() as conn:
            rows = conn.execute(f"SELECT {self.rules.COLUMNS} FROM approval_records WHERE state = %s AND "
                                f"expires_at > {NOW} ORDER BY created_at DESC, id LIMIT %s",
                                [self.rules.PENDING, limit]).fetchall()
        return [self.rules.record_of(r) for r in rows]

    def for_call(self, call_key: str) -> list[Any]:
        """The records of one transcript call, oldest first."""
        with self.db.connection() as conn:
            rows = conn.execute(f"SELECT {self.rules.COLUMNS} FROM approval_records WHERE call_key = %s "
                                "ORDER BY created_at, id", [call_key]).fetchall()
        return [self.rules.record_of(r) for r in rows]

    def parks(self, call_key: str) -> bool:
        """Whether a call cut off by a dead host waits on (or got) an answer never acted on."""
        return bool(self.rules.parks_on(self.for_call(call_key)))

    async def wait(self, approval_id: str, poll_s: float | None = None) -> Any:
        """The record once it is no longer pending: an answer from any host of the fleet, or
        expiry by the database's clock. Woken by the database's notice of the settle
        (approval_notices); reads every `poll_s` only while notices do not arrive."""
        poll = self.rules.WAIT_POLL_S if poll_s is None else poll_s
        notices = self.notices
        woken = notices.watch(approval_id) if notices is not None else None
        try:
            while True:
                record, now = await asyncio.to_thread(self._get_with_now, approval_id)
                if record.state != self.rules.PENDING:
                    return record
                if now >= record.expires_at:  # settled now; a newer build's record stays pending: poll on
                    await asyncio.to_thread(self.expire_due)
                    await asyncio.sleep(0 if record.schema <= self.rules.RECORD_SCHEMA else poll)
                    continue
                noticed = notices is not None and notices.listening
                pause = min(max(poll, NOTICED_POLL_S) if noticed else poll, record.expires_at - now + 0.001)
                if woken is None:
                    await asyncio.sleep(pause)
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), pause)
                woken.clear()
        finally:
            if notices is not None and woken is not None:
                notices.unwatch(approval_id, woken)

    def close(self) -> None:
        """Nothing of its own to close: the connections are the backend's pool's."""
