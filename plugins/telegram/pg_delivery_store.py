"""The delivery records (delivery_store) in the fleet's PostgreSQL database: one set of
deliveries, handled updates, approval prompts and offsets for every host of the fleet.

Same API and states as DeliveryStore. What differs is who settles an interrupted attempt:
on one state dir every `attempting` left at start was a dead process's; in a fleet another
host may be sending right now. So each process holds a named lease of its own
(`telegram-sender:<id>`) and stamps its attempts with that id; an attempt is settled
`uncertain` only once its sender's lease can be taken, that is, its process is gone.
"""

from __future__ import annotations

import json
import os
import socket
import uuid
from collections.abc import Iterator
from typing import Any

from atomic_agent.api import store_clock
from atomic_agent.plugins.postgresql.postgresql_contract import NamedLease, SharedDatabase

from .delivery_store import (
    APPROVAL_MEMORY_MS,
    ATTEMPTING,
    COLUMNS,
    DELIVERED,
    FAILED,
    INTERRUPTED,
    PENDING,
    REPLY,
    STATES,
    UNCERTAIN,
    Delivery,
    delivery_of,
)
from .pg_delivery_schema import STEPS

SENDER_LEASE = "telegram-sender:"


class PgDeliveryStore:
    def __init__(self, shared: SharedDatabase) -> None:
        self.shared = shared
        self.path = shared.shown  # where the records are, for messages
        shared.ensure_schema("telegram", STEPS)
        self.sender = uuid.uuid4().hex
        lease = shared.lease(SENDER_LEASE + self.sender)
        if lease is None:  # a fresh random name nobody else holds
            raise RuntimeError(f"the sender lease {self.sender} is held by another process")
        self._lease: NamedLease = lease

    def close(self) -> None:
        """Let go of the sender lease: this process's unfinished attempts may now be settled."""
        self._lease.release()

    # -- approval prompts ----------------------------------------------------------------------
    def approval_opened(self, token: str, chat_id: int) -> None:
        now = store_clock.now_ms()
        with self.shared.transaction() as conn:
            conn.execute("DELETE FROM telegram_approval_requests WHERE updated_at < %s", [now - APPROVAL_MEMORY_MS])
            conn.execute("INSERT INTO telegram_approval_requests (token, chat_id, state, created_at, updated_at) "
                         "VALUES (%s, %s, 'open', %s, %s) ON CONFLICT (token) DO NOTHING", [token, chat_id, now, now])

    def approval_settled(self, token: str, state: str, resolver: str) -> None:
        with self.shared.transaction() as conn:
            conn.execute("UPDATE telegram_approval_requests SET state = %s, resolver = %s, updated_at = %s "
                         "WHERE token = %s AND state = 'open'", [state, resolver, store_clock.now_ms(), token])

    def approval_outcome(self, token: str) -> tuple[str, str | None] | None:
        with self.shared.connection() as conn:
            row = conn.execute("SELECT state, resolver FROM telegram_approval_requests WHERE token = %s",
                               [token]).fetchone()
        return None if row is None else (str(row[0]), row[1])

    # -- obligations ---------------------------------------------------------------------------
    def open_reply(self, turn_id: str, chat_id: int, session_id: str) -> Delivery:
        now = store_clock.now_ms()
        with self.shared.transaction() as conn:
            conn.execute("INSERT INTO telegram_deliveries (kind, chat_id, session_id, turn_id, state, created_at, "
                         "updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (turn_id) DO NOTHING",
                         [REPLY, chat_id, session_id, turn_id, PENDING, now, now])
        found = self.for_turn(turn_id)
        assert found is not None
        return found

    def record(self, kind: str, chat_id: int, body: str, formatted: bool, session_id: str | None = None) -> Delivery:
        now = store_clock.now_ms()
        with self.shared.transaction() as conn:
            row = conn.execute("INSERT INTO telegram_deliveries (kind, chat_id, session_id, body, formatted, state, "
                               "created_at, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
                               [kind, chat_id, session_id, body, formatted, PENDING, now, now]).fetchone()
        return self.get(int(row[0]))  # type: ignore[return-value]

    def set_body(self, delivery_id: int, body: str, formatted: bool) -> Delivery:
        with self.shared.transaction() as conn:
            conn.execute("UPDATE telegram_deliveries SET body = %s, formatted = %s, updated_at = %s "
                         "WHERE id = %s AND body IS NULL AND state = %s",
                         [body, formatted, store_clock.now_ms(), delivery_id, PENDING])
        return self.get(delivery_id)  # type: ignore[return-value]

    def drop_merged(self, delivery_id: int) -> None:
        with self.shared.transaction() as conn:
            conn.execute("DELETE FROM telegram_deliveries WHERE id = %s AND body IS NULL AND state = %s",
                         [delivery_id, PENDING])

    # -- one send ------------------------------------------------------------------------------
    def mark_attempting(self, delivery_id: int, chunks_total: int) -> bool:
        """Committed before a chunk's send; False when another host (or task) took it first."""
        with self.shared.transaction() as conn:
            cursor = conn.execute("UPDATE telegram_deliveries SET state = %s, chunks_total = %s, sender = %s, "
                                  "updated_at = %s WHERE id = %s AND state = %s",
                                  [ATTEMPTING, chunks_total, self.sender, store_clock.now_ms(), delivery_id, PENDING])
            return cursor.rowcount == 1

    def chunk_sent(self, delivery_id: int, message_id: int, parse_fallback: bool) -> Delivery:
        with self.shared.transaction() as conn:
            row = conn.execute("SELECT chunks_sent, chunks_total, message_ids FROM telegram_deliveries "
                               "WHERE id = %s FOR UPDATE", [delivery_id]).fetchone()
            sent, total, ids = row[0] + 1, row[1], json.loads(row[2]) + [message_id]
            conn.execute("UPDATE telegram_deliveries SET chunks_sent = %s, message_ids = %s, "
                         "parse_fallbacks = parse_fallbacks + %s, state = %s, updated_at = %s "
                         "WHERE id = %s AND state = %s",
                         [sent, json.dumps(ids), int(parse_fallback), DELIVERED if sent >= total else PENDING,
                          store_clock.now_ms(), delivery_id, ATTEMPTING])
        return self.get(delivery_id)  # type: ignore[return-value]

    def chunk_not_sent(self, delivery_id: int, error: str) -> None:
        self._settle(delivery_id, PENDING, error)

    def fail(self, delivery_id: int, error: str) -> None:
        self._settle(delivery_id, FAILED, error)

    def uncertain(self, delivery_id: int, error: str) -> None:
        self._settle(delivery_id, UNCERTAIN, error)

    def _settle(self, delivery_id: int, state: str, error: str) -> None:
        with self.shared.transaction() as conn:
            conn.execute("UPDATE telegram_deliveries SET state = %s, error = %s, updated_at = %s "
                         "WHERE id = %s AND state = %s", [state, error, store_clock.now_ms(), delivery_id, ATTEMPTING])

    # -- a dead sender -------------------------------------------------------------------------
    def settle_interrupted(self) -> int:
        """Attempts whose sender process is gone (its lease is free) become `uncertain`; a live
        host's attempts are left to it."""
        with self.shared.connection() as conn:
            senders = [r[0] for r in conn.execute(
                "SELECT DISTINCT sender FROM telegram_deliveries WHERE state = %s AND sender IS DISTINCT FROM %s",
                [ATTEMPTING, self.sender])]
        settled = 0
        for sender in senders:
            probe = self.shared.lease(SENDER_LEASE + sender) if sender else None
            if sender and probe is None:
                continue  # its process lives: it settles its own attempts
            try:
                with self.shared.transaction() as conn:
                    settled += conn.execute(
                        "UPDATE telegram_deliveries SET state = %s, error = %s, updated_at = %s "
                        "WHERE state = %s AND sender IS NOT DISTINCT FROM %s",
                        [UNCERTAIN, INTERRUPTED, store_clock.now_ms(), ATTEMPTING, sender]).rowcount
            finally:
                if probe is not None:
                    probe.release()
        return settled

    # -- inbound dedupe and the shared offset ---------------------------------------------------
    def was_handled(self, update_id: int) -> bool:
        with self.shared.connection() as conn:
            return conn.execute("SELECT 1 FROM telegram_handled_updates WHERE update_id = %s",
                                [update_id]).fetchone() is not None

    def mark_handled(self, update_id: int, outcome: str) -> None:
        with self.shared.transaction() as conn:
            conn.execute("INSERT INTO telegram_handled_updates (update_id, outcome, handled_at) VALUES (%s, %s, %s) "
                         "ON CONFLICT (update_id) DO NOTHING", [update_id, outcome, store_clock.now_ms()])

    def saved_offset(self, bot_id: int) -> int | None:
        with self.shared.connection() as conn:
            row = conn.execute("SELECT next_offset FROM telegram_offsets WHERE bot_id = %s", [bot_id]).fetchone()
        return None if row is None else int(row[0])

    def save_offset(self, bot_id: int, offset: int) -> None:
        """Never moves back: a slower poller's older offset does not undo a newer one."""
        with self.shared.transaction() as conn:
            conn.execute("INSERT INTO telegram_offsets (bot_id, next_offset) VALUES (%s, %s) ON CONFLICT (bot_id) "
                         "DO UPDATE SET next_offset = GREATEST(telegram_offsets.next_offset, EXCLUDED.next_offset)",
                         [bot_id, offset])

    # -- who polls -----------------------------------------------------------------------------
    def poller_took(self, bot_id: int) -> None:
        """This process took the poller lease of `bot_id` (the time is the database's)."""
        with self.shared.transaction() as conn:
            conn.execute("INSERT INTO telegram_pollers (bot_id, host, pid, since) VALUES (%s, %s, %s, now()) "
                         "ON CONFLICT (bot_id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, since = now()",
                         [bot_id, socket.gethostname(), os.getpid()])

    def poller(self, bot_id: int) -> dict[str, Any] | None:
        """The process that took the lease last: {host, pid, since}, or None (never polled)."""
        with self.shared.connection() as conn:
            row = conn.execute("SELECT host, pid, since FROM telegram_pollers WHERE bot_id = %s", [bot_id]).fetchone()
        return None if row is None else {"host": row[0], "pid": int(row[1]), "since": row[2].isoformat()}

    # -- reads ---------------------------------------------------------------------------------
    def get(self, delivery_id: int) -> Delivery | None:
        with self.shared.connection() as conn:
            row = conn.execute(f"SELECT {COLUMNS} FROM telegram_deliveries WHERE id = %s", [delivery_id]).fetchone()
        return delivery_of(row) if row else None

    def for_turn(self, turn_id: str) -> Delivery | None:
        with self.shared.connection() as conn:
            row = conn.execute(f"SELECT {COLUMNS} FROM telegram_deliveries WHERE turn_id = %s", [turn_id]).fetchone()
        return delivery_of(row) if row else None

    def in_state(self, *states: str) -> list[Delivery]:
        with self.shared.connection() as conn:
            return [delivery_of(r) for r in conn.execute(
                f"SELECT {COLUMNS} FROM telegram_deliveries WHERE state = ANY(%s) ORDER BY id", [list(states)])]

    def recent(self, limit: int = 20, session_id: str | None = None) -> Iterator[Delivery]:
        where, args = ("WHERE session_id = %s", [session_id, limit]) if session_id else ("", [limit])
        with self.shared.connection() as conn:
            rows = conn.execute(f"SELECT {COLUMNS} FROM telegram_deliveries {where} ORDER BY id DESC LIMIT %s",
                                args).fetchall()
        return iter([delivery_of(r) for r in rows])

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATES, 0)
        with self.shared.connection() as conn:
            for state, count in conn.execute("SELECT state, COUNT(*) FROM telegram_deliveries GROUP BY state"):
                out[state] = int(count)
        return out
