"""Every outbound reply and report as a delivery record, and the inbound updates and offsets
of each bot: one SQL text over two engines, `<state>/telegram.sqlite` (DeliveryDatabase, one
host) or the fleet's PostgreSQL (the `shared_database` service's QmarkEngine, every host).

A record is written before anything is sent and moves pending -> attempting ->
delivered | failed | uncertain; each chunk's Telegram message id is kept. A chunk is
marked `attempting` (committed, FULL durability) before its sendMessage and its message
id recorded after, so a process killed in between leaves `attempting` behind: once its
sender is gone (delivery_senders) the attempt becomes `uncertain` (Telegram may or may not
have shown it) and is never resent. A record still `pending` was never attempted (or only
its earlier chunks were delivered) and is resumed from its next chunk.

A reply is recorded as soon as its turn is admitted, before its text exists (`body` NULL):
the obligation outlives a crash between the turn's end and the send. Everything is keyed by
the bot (its id, the token's prefix): bots sharing one database never see each other's
update ids, and a store opened for one bot (`bot_of`, the channel's bot now) records,
resumes, settles and counts only that bot's deliveries, so none is sent with another bot's
token. Approval prompts are not keyed: their tokens are random, and a button press carries
only a token its own bot sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import store_clock
from atomic_agent.plugins.postgresql.postgresql_contract import QmarkEngine, SharedDatabase

from .delivery_database import DeliveryDatabase, DeliveryFileLook, db_path
from .delivery_schema import PG_STEPS
from .delivery_senders import FleetSenders, LocalSenders

PENDING, ATTEMPTING, DELIVERED, FAILED, UNCERTAIN = "pending", "attempting", "delivered", "failed", "uncertain"
STATES = (PENDING, ATTEMPTING, DELIVERED, FAILED, UNCERTAIN)
REPLY, REPORT = "reply", "report"
INTERRUPTED = "the process stopped while this was being sent; Telegram may or may not show it"


class TelegramStoreError(RuntimeError):
    """The fleet's database cannot keep Telegram's records (the message says what to check)."""


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


def delivery_of(row: dict[str, Any]) -> Delivery:
    return Delivery(row["id"], row["kind"], row["chat_id"], row["session_id"], row["turn_id"], row["body"],
                    bool(row["formatted"]), row["state"], row["chunks_total"], row["chunks_sent"],
                    tuple(json.loads(row["message_ids"])), row["parse_fallbacks"], row["error"], row["created_at"],
                    row["updated_at"])


APPROVAL_MEMORY_MS = 30 * 24 * 3_600_000  # how long a prompt's fate is kept for a late button press


class DeliveryStore:
    def __init__(self, database: DeliveryDatabase | DeliveryFileLook | QmarkEngine, senders: LocalSenders | FleetSenders,
                 bot_of: Callable[[], int]) -> None:
        self.database = database
        self.path = database.path  # where the records are, for messages
        self.senders = senders
        # the bot whose deliveries these are, asked at each call: a channel's token may change
        # while its records stay open (0: no token, the bot of no delivery that can be sent)
        self._bot_of = bot_of

    @classmethod
    def of_state_dir(cls, state_dir: Path, bot_of: Callable[[], int]) -> DeliveryStore:
        """telegram.sqlite, created or migrated (a file of a newer build is refused untouched)."""
        return cls(DeliveryDatabase(db_path(state_dir)), LocalSenders(), bot_of)

    @classmethod
    def of_fleet(cls, shared: SharedDatabase, bot_of: Callable[[], int]) -> DeliveryStore:
        """The fleet's records (schema ensured), with this process's sender lease."""
        return cls(shared.qmark_engine("telegram", PG_STEPS, TelegramStoreError), FleetSenders(shared), bot_of)

    @classmethod
    def looking(cls, database: DeliveryFileLook | QmarkEngine, bot_id: int) -> DeliveryStore:
        """The read methods over an engine that writes nothing (doctor, status: delivery_look);
        no sender lease is taken, since a look sends nothing."""
        return cls(database, LocalSenders(), lambda: bot_id)

    @property
    def bot_id(self) -> int:
        return self._bot_of()

    def close(self) -> None:
        self.senders.release()
        self.database.close()

    # -- approval prompts ----------------------------------------------------------------------
    def approval_opened(self, token: str, chat_id: int) -> None:
        now = store_clock.now_ms()
        with self.database.write() as tx:
            tx.execute("DELETE FROM telegram_approval_requests WHERE updated_at < ?", [now - APPROVAL_MEMORY_MS])
            tx.execute("INSERT INTO telegram_approval_requests (token, chat_id, state, created_at, updated_at) "
                       "VALUES (?, ?, 'open', ?, ?) ON CONFLICT (token) DO NOTHING", [token, chat_id, now, now])

    def approval_settled(self, token: str, state: str, resolver: str) -> None:
        with self.database.write() as tx:
            tx.execute("UPDATE telegram_approval_requests SET state = ?, resolver = ?, updated_at = ? "
                       "WHERE token = ? AND state = 'open'", [state, resolver, store_clock.now_ms(), token])

    def approval_outcome(self, token: str) -> tuple[str, str | None] | None:
        """(state, resolver) of a prompt these records hold, or None when it never was (or is forgotten)."""
        rows = self.database.query("SELECT state, resolver FROM telegram_approval_requests WHERE token = ?", [token])
        return None if not rows else (str(rows[0]["state"]), rows[0]["resolver"])

    # -- obligations ---------------------------------------------------------------------------
    def open_reply(self, turn_id: str, chat_id: int, session_id: str) -> Delivery:
        """The reply obligation of an admitted turn (idempotent: one record per turn)."""
        now = store_clock.now_ms()
        with self.database.write() as tx:
            tx.execute("INSERT INTO telegram_deliveries (bot_id, kind, chat_id, session_id, turn_id, state, "
                       "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (turn_id) DO NOTHING",
                       [self.bot_id, REPLY, chat_id, session_id, turn_id, PENDING, now, now])
        found = self.for_turn(turn_id)
        assert found is not None
        return found

    def record(self, kind: str, chat_id: int, body: str, formatted: bool, session_id: str | None = None) -> Delivery:
        """A delivery whose text is known now (a task report, a notice owed to the owner)."""
        now = store_clock.now_ms()
        with self.database.write() as tx:
            new_id = int(tx.execute(
                "INSERT INTO telegram_deliveries (bot_id, kind, chat_id, session_id, body, formatted, state, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                [self.bot_id, kind, chat_id, session_id, body, formatted, PENDING, now, now]).fetchone()[0])
        return self.get(new_id)  # type: ignore[return-value]

    def set_body(self, delivery_id: int, body: str, formatted: bool) -> Delivery:
        """Fill the text of a reply whose turn ended (only while nothing was sent)."""
        with self.database.write() as tx:
            tx.execute("UPDATE telegram_deliveries SET body = ?, formatted = ?, updated_at = ? "
                       "WHERE id = ? AND body IS NULL AND state = ?",
                       [body, formatted, store_clock.now_ms(), delivery_id, PENDING])
        return self.get(delivery_id)  # type: ignore[return-value]

    def drop_merged(self, delivery_id: int) -> None:
        """A reply obligation whose message another turn answered (sendMode all merges queued
        messages into one turn): that turn's own record carries the answer, once."""
        with self.database.write() as tx:
            tx.execute("DELETE FROM telegram_deliveries WHERE id = ? AND body IS NULL AND state = ?",
                       [delivery_id, PENDING])

    # -- one send ------------------------------------------------------------------------------
    def mark_attempting(self, delivery_id: int, chunks_total: int) -> bool:
        """Committed before a chunk's send, stamped with this process as its sender; False when
        the record is no longer sendable (another sender took it, it settled, or it is another
        bot's: the token in hand is this store's bot's)."""
        with self.database.write() as tx:
            cursor = tx.execute("UPDATE telegram_deliveries SET state = ?, chunks_total = ?, sender = ?, "
                                "updated_at = ? WHERE id = ? AND state = ? AND bot_id = ?",
                                [ATTEMPTING, chunks_total, self.senders.name, store_clock.now_ms(), delivery_id,
                                 PENDING, self.bot_id])
            return bool(cursor.rowcount == 1)

    def chunk_sent(self, delivery_id: int, message_id: int, parse_fallback: bool) -> Delivery:
        """The chunk in flight arrived: its evidence is recorded; the record is delivered when
        it was the last chunk, else pending again for the next one."""
        with self.database.write() as tx:
            row = self.database.query("SELECT chunks_sent, chunks_total, message_ids FROM telegram_deliveries "
                                      "WHERE id = ?" + self.database.lock_row, [delivery_id])[0]
            sent, total = row["chunks_sent"] + 1, row["chunks_total"]
            ids = json.loads(row["message_ids"]) + [message_id]
            tx.execute("UPDATE telegram_deliveries SET chunks_sent = ?, message_ids = ?, "
                       "parse_fallbacks = parse_fallbacks + ?, state = ?, updated_at = ? WHERE id = ? AND state = ?",
                       [sent, json.dumps(ids), int(parse_fallback), DELIVERED if sent >= total else PENDING,
                        store_clock.now_ms(), delivery_id, ATTEMPTING])
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
        with self.database.write() as tx:
            tx.execute("UPDATE telegram_deliveries SET state = ?, error = ?, updated_at = ? WHERE id = ? AND state = ?",
                       [state, error, store_clock.now_ms(), delivery_id, ATTEMPTING])

    # -- a dead sender -------------------------------------------------------------------------
    def settle_interrupted(self) -> int:
        """This bot's attempts whose sender process is gone become `uncertain` (never resent); a
        live host's attempts are left to it, another bot's to that bot's fleet."""
        bot_id = self.bot_id
        senders = [str(r["sender"]) for r in self.database.query(
            "SELECT DISTINCT COALESCE(sender, '') AS sender FROM telegram_deliveries WHERE state = ? AND bot_id = ?",
            [ATTEMPTING, bot_id])]
        settled = 0
        for sender in senders:
            with self.senders.gone(sender) as gone:
                if not gone:
                    continue
                with self.database.write() as tx:
                    settled += int(tx.execute(
                        "UPDATE telegram_deliveries SET state = ?, error = ?, updated_at = ? "
                        "WHERE state = ? AND COALESCE(sender, '') = ? AND bot_id = ?",
                        [UNCERTAIN, INTERRUPTED, store_clock.now_ms(), ATTEMPTING, sender, bot_id]).rowcount)
        return settled

    # -- inbound dedupe and the offset, per bot ------------------------------------------------
    def was_handled(self, bot_id: int, update_id: int) -> bool:
        return bool(self.database.query("SELECT 1 AS one FROM telegram_handled_updates WHERE bot_id = ? "
                                        "AND update_id = ?", [bot_id, update_id]))

    def mark_handled(self, bot_id: int, update_id: int, outcome: str) -> None:
        with self.database.write() as tx:
            tx.execute("INSERT INTO telegram_handled_updates (bot_id, update_id, outcome, handled_at) "
                       "VALUES (?, ?, ?, ?) ON CONFLICT (bot_id, update_id) DO NOTHING",
                       [bot_id, update_id, outcome, store_clock.now_ms()])

    def saved_offset(self, bot_id: int) -> int | None:
        """The offset the last poller of `bot_id` confirmed up to (its next getUpdates'), or None."""
        rows = self.database.query("SELECT next_offset FROM telegram_offsets WHERE bot_id = ?", [bot_id])
        return None if not rows else int(rows[0]["next_offset"])

    def save_offset(self, bot_id: int, offset: int) -> None:
        """Never moves back: an older offset (a slower poller's) does not undo a newer one."""
        with self.database.write() as tx:
            tx.execute("INSERT INTO telegram_offsets (bot_id, next_offset) VALUES (?, ?) ON CONFLICT (bot_id) "
                       "DO UPDATE SET next_offset = CASE WHEN excluded.next_offset > telegram_offsets.next_offset "
                       "THEN excluded.next_offset ELSE telegram_offsets.next_offset END", [bot_id, offset])

    # -- reads ---------------------------------------------------------------------------------
    def get(self, delivery_id: int) -> Delivery | None:
        rows = self.database.query(f"SELECT {COLUMNS} FROM telegram_deliveries WHERE id = ?", [delivery_id])
        return delivery_of(rows[0]) if rows else None

    def for_turn(self, turn_id: str) -> Delivery | None:
        rows = self.database.query(f"SELECT {COLUMNS} FROM telegram_deliveries WHERE turn_id = ?", [turn_id])
        return delivery_of(rows[0]) if rows else None

    def in_state(self, *states: str) -> list[Delivery]:
        """This bot's deliveries in `states`, oldest first (what is resumed and listed)."""
        marks = ", ".join("?" for _ in states)
        return [delivery_of(r) for r in self.database.query(
            f"SELECT {COLUMNS} FROM telegram_deliveries WHERE bot_id = ? AND state IN ({marks}) ORDER BY id",
            [self.bot_id, *states])]

    def recent(self, limit: int = 20, session_id: str | None = None) -> Iterator[Delivery]:
        where, args = ("AND session_id = ?", [session_id]) if session_id else ("", [])
        return iter([delivery_of(r) for r in self.database.query(
            f"SELECT {COLUMNS} FROM telegram_deliveries WHERE bot_id = ? {where} ORDER BY id DESC LIMIT ?",
            [self.bot_id, *args, limit])])

    def counts(self) -> dict[str, int]:
        """This bot's deliveries by state."""
        out = dict.fromkeys(STATES, 0)
        for row in self.database.query("SELECT state, COUNT(*) AS n FROM telegram_deliveries WHERE bot_id = ? "
                                       "GROUP BY state", [self.bot_id]):
            out[row["state"]] = int(row["n"])
        return out
