"""`<state>/telegram.sqlite`: every outbound reply and report as a delivery record.

A record is written before anything is sent and moves pending -> attempting ->
delivered | failed | uncertain; each chunk's Telegram message id is kept. A chunk is
marked `attempting` (committed, FULL durability) before its sendMessage and its message
id recorded after, so a process killed in between leaves `attempting` behind: the next
start turns it into `uncertain` (Telegram may or may not have shown it) and never resends
it. A record still `pending` was never attempted (or only its earlier chunks were
delivered) and is resumed from its next chunk.

A reply is recorded as soon as its turn is admitted, before its text exists (`body` NULL):
the obligation outlives a crash between the turn's end and the send.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import SqliteStore, store_clock

from .delivery_schema import MIGRATIONS

DB_FILE = "telegram.sqlite"
PENDING, ATTEMPTING, DELIVERED, FAILED, UNCERTAIN = "pending", "attempting", "delivered", "failed", "uncertain"
STATES = (PENDING, ATTEMPTING, DELIVERED, FAILED, UNCERTAIN)
REPLY, REPORT = "reply", "report"
INTERRUPTED = "the process stopped while this was being sent; Telegram may or may not show it"


@attrs.frozen
class Delivery:
    id: int
    kind: str
    chat_id: int
    session_id: str | None
    turn_id: str | None
    body: str | None
    formatted: bool
    state: str
    chunks_total: int
    chunks_sent: int
    message_ids: tuple[int, ...]
    parse_fallbacks: int
    error: str | None
    created_at: int
    updated_at: int

    def as_dict(self) -> dict[str, Any]:
        out = attrs.asdict(self)
        out["message_ids"] = list(self.message_ids)
        out.pop("body")
        return out


COLUMNS = ("id, kind, chat_id, session_id, turn_id, body, formatted, state, chunks_total, chunks_sent, "
            "message_ids, parse_fallbacks, error, created_at, updated_at")


def delivery_of(row: tuple[Any, ...]) -> Delivery:
    (id_, kind, chat_id, session_id, turn_id, body, formatted, state, total, sent, ids, fallbacks, error,
     created, updated) = row
    return Delivery(id_, kind, chat_id, session_id, turn_id, body, bool(formatted), state, total, sent,
                    tuple(json.loads(ids)), fallbacks, error, created, updated)


APPROVAL_MEMORY_MS = 30 * 24 * 3_600_000  # how long a prompt's fate is kept for a late button press


class TelegramStoreNewerError(RuntimeError):
    """telegram.sqlite belongs to a newer build; not a sqlite3.DatabaseError (it is not damage)."""


def db_path(state_dir: Path) -> Path:
    return state_dir / DB_FILE


class DeliveryStore(SqliteStore):
    migrations = MIGRATIONS

    def __init__(self, state_dir: Path) -> None:
        # a file of a newer build is refused before anything is written to it
        super().__init__(db_path(state_dir))

    def refuse_newer(self, newer: str) -> Exception:
        return TelegramStoreNewerError(
            f"{self.path} was written by a newer atomic-agent ({newer}; this build knows schema version "
            f"{len(MIGRATIONS)}); it was left untouched. Upgrade atomic-agent to use this state directory, "
            "or point --state-dir at another one")

    # -- approval prompts ----------------------------------------------------------------------
    def approval_opened(self, token: str, chat_id: int) -> None:
        now = store_clock.now_ms()
        with self.write():
            self.conn.execute("DELETE FROM approval_requests WHERE updated_at < ?", (now - APPROVAL_MEMORY_MS,))
            self.conn.execute("INSERT OR IGNORE INTO approval_requests (token, chat_id, state, created_at, updated_at) "
                              "VALUES (?, ?, 'open', ?, ?)", (token, chat_id, now, now))

    def approval_settled(self, token: str, state: str, resolver: str) -> None:
        with self.write():
            self.conn.execute("UPDATE approval_requests SET state = ?, resolver = ?, updated_at = ? "
                              "WHERE token = ? AND state = 'open'", (state, resolver, store_clock.now_ms(), token))

    def approval_outcome(self, token: str) -> tuple[str, str | None] | None:
        """(state, resolver) of a prompt this state dir sent, or None when it never did (or forgot)."""
        row = self.conn.execute("SELECT state, resolver FROM approval_requests WHERE token = ?", (token,)).fetchone()
        return None if row is None else (str(row[0]), row[1])

    # -- obligations ---------------------------------------------------------------------------
    def open_reply(self, turn_id: str, chat_id: int, session_id: str) -> Delivery:
        """The reply obligation of an admitted turn (idempotent: one record per turn)."""
        now = store_clock.now_ms()
        with self.write():
            self.conn.execute(
                "INSERT OR IGNORE INTO deliveries (kind, chat_id, session_id, turn_id, state, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)", (REPLY, chat_id, session_id, turn_id, PENDING, now, now))
        found = self.for_turn(turn_id)
        assert found is not None
        return found

    def record(self, kind: str, chat_id: int, body: str, formatted: bool, session_id: str | None = None) -> Delivery:
        """A delivery whose text is known now (a task report, a notice owed to the owner)."""
        now = store_clock.now_ms()
        with self.write():
            cursor = self.conn.execute(
                "INSERT INTO deliveries (kind, chat_id, session_id, body, formatted, state, created_at, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (kind, chat_id, session_id, body, int(formatted), PENDING, now, now))
            new_id = int(cursor.lastrowid or 0)
        return self.get(new_id)  # type: ignore[return-value]

    def set_body(self, delivery_id: int, body: str, formatted: bool) -> Delivery:
        """Fill the text of a reply whose turn ended (only while nothing was sent)."""
        with self.write():
            self.conn.execute("UPDATE deliveries SET body = ?, formatted = ?, updated_at = ? "
                              "WHERE id = ? AND body IS NULL AND state = ?",
                              (body, int(formatted), store_clock.now_ms(), delivery_id, PENDING))
        return self.get(delivery_id)  # type: ignore[return-value]

    def drop_merged(self, delivery_id: int) -> None:
        """A reply obligation whose message another turn answered (sendMode all merges queued
        messages into one turn): that turn's own record carries the answer, once."""
        with self.write():
            self.conn.execute("DELETE FROM deliveries WHERE id = ? AND body IS NULL AND state = ?",
                              (delivery_id, PENDING))

    # -- one send ------------------------------------------------------------------------------
    def mark_attempting(self, delivery_id: int, chunks_total: int) -> bool:
        """Committed before a chunk's send; False when the record is no longer sendable (another
        sender took it, or it settled)."""
        with self.write():
            cursor = self.conn.execute(
                "UPDATE deliveries SET state = ?, chunks_total = ?, updated_at = ? WHERE id = ? AND state = ?",
                (ATTEMPTING, chunks_total, store_clock.now_ms(), delivery_id, PENDING))
        return cursor.rowcount == 1

    def chunk_sent(self, delivery_id: int, message_id: int, parse_fallback: bool) -> Delivery:
        """The chunk in flight arrived: its evidence is recorded; the record is delivered when
        it was the last chunk, else pending again for the next one."""
        with self.write():
            row = self.conn.execute("SELECT chunks_sent, chunks_total, message_ids FROM deliveries WHERE id = ?",
                                    (delivery_id,)).fetchone()
            sent, total, ids = row[0] + 1, row[1], json.loads(row[2]) + [message_id]
            self.conn.execute(
                "UPDATE deliveries SET chunks_sent = ?, message_ids = ?, parse_fallbacks = parse_fallbacks + ?, "
                "state = ?, updated_at = ? WHERE id = ? AND state = ?",
                (sent, json.dumps(ids), int(parse_fallback), DELIVERED if sent >= total else PENDING,
                 store_clock.now_ms(), delivery_id, ATTEMPTING))
        return self.get(delivery_id)  # type: ignore[return-value]

    def chunk_not_sent(self, delivery_id: int, error: str) -> None:
        """Telegram certainly did not show the chunk (refused it, or it never reached the
        server): back to pending, to be tried again."""
        self._settle(delivery_id, PENDING, error)

    def fail(self, delivery_id: int, error: str) -> None:
        self._settle(delivery_id, FAILED, error)

    def uncertain(self, delivery_id: int, error: str) -> None:
        self._settle(delivery_id, UNCERTAIN, error)

    def _settle(self, delivery_id: int, state: str, error: str) -> None:
        with self.write():
            self.conn.execute("UPDATE deliveries SET state = ?, error = ?, updated_at = ? WHERE id = ? AND state = ?",
                              (state, error, store_clock.now_ms(), delivery_id, ATTEMPTING))

    # -- restart -------------------------------------------------------------------------------
    def settle_interrupted(self) -> int:
        """At start: an attempt a dead process left mid-send is `uncertain` (never resent)."""
        with self.write():
            cursor = self.conn.execute(
                "UPDATE deliveries SET state = ?, error = ?, updated_at = ? WHERE state = ?",
                (UNCERTAIN, INTERRUPTED, store_clock.now_ms(), ATTEMPTING))
        return cursor.rowcount

    # -- inbound dedupe ------------------------------------------------------------------------
    def was_handled(self, update_id: int) -> bool:
        return self.conn.execute("SELECT 1 FROM handled_updates WHERE update_id = ?", (update_id,)).fetchone() is not None

    def mark_handled(self, update_id: int, outcome: str) -> None:
        with self.write():
            self.conn.execute("INSERT OR IGNORE INTO handled_updates (update_id, outcome, handled_at) VALUES (?, ?, ?)",
                              (update_id, outcome, store_clock.now_ms()))

    def saved_offset(self, bot_id: int) -> int | None:
        """The offset the last poller of `bot_id` confirmed up to (its next getUpdates'), or None."""
        row = self.conn.execute("SELECT next_offset FROM offsets WHERE bot_id = ?", (bot_id,)).fetchone()
        return None if row is None else int(row[0])

    def save_offset(self, bot_id: int, offset: int) -> None:
        """Never moves back: an older offset does not undo a newer one."""
        with self.write():
            self.conn.execute("INSERT INTO offsets (bot_id, next_offset) VALUES (?, ?) ON CONFLICT (bot_id) "
                              "DO UPDATE SET next_offset = MAX(next_offset, excluded.next_offset)", (bot_id, offset))

    # -- reads ---------------------------------------------------------------------------------
    def get(self, delivery_id: int) -> Delivery | None:
        row = self.conn.execute(f"SELECT {COLUMNS} FROM deliveries WHERE id = ?", (delivery_id,)).fetchone()
        return delivery_of(row) if row else None

    def for_turn(self, turn_id: str) -> Delivery | None:
        row = self.conn.execute(f"SELECT {COLUMNS} FROM deliveries WHERE turn_id = ?", (turn_id,)).fetchone()
        return delivery_of(row) if row else None

    def in_state(self, *states: str) -> list[Delivery]:
        marks = ", ".join("?" for _ in states)
        return [delivery_of(r) for r in self.conn.execute(
            f"SELECT {COLUMNS} FROM deliveries WHERE state IN ({marks}) ORDER BY id", states)]

    def recent(self, limit: int = 20, session_id: str | None = None) -> Iterator[Delivery]:
        where, args = ("WHERE session_id = ?", (session_id, limit)) if session_id else ("", (limit,))
        for row in self.conn.execute(f"SELECT {COLUMNS} FROM deliveries {where} ORDER BY id DESC LIMIT ?", args):
            yield delivery_of(row)

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATES, 0)
        for state, count in self.conn.execute("SELECT state, COUNT(*) FROM deliveries GROUP BY state"):
            out[state] = count
        return out
