"""Telegram's tables on both engines, never renamed or reordered, each step idempotent:
telegram.sqlite's migrations (functions m00N_..., applied by storage.sqlite_migrations) and
the fleet's database's steps (`telegram.mNNN_...`, applied by the shared migration runner).
At their newest both hold the same tables under the same names (telegram_*), so the store's
SQL is one text."""

from __future__ import annotations

from typing import Any

from atomic_agent.api import SqliteStore

_DELIVERIES = """
CREATE TABLE IF NOT EXISTS deliveries (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  chat_id INTEGER NOT NULL,
  session_id TEXT,
  turn_id TEXT UNIQUE,
  body TEXT,
  formatted INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL,
  chunks_total INTEGER NOT NULL DEFAULT 0,
  chunks_sent INTEGER NOT NULL DEFAULT 0,
  message_ids TEXT NOT NULL DEFAULT '[]',
  parse_fallbacks INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)"""

_HANDLED = """
CREATE TABLE IF NOT EXISTS handled_updates (
  update_id INTEGER PRIMARY KEY,
  outcome TEXT NOT NULL,
  handled_at INTEGER NOT NULL
)"""


def m001_deliveries(db: Any) -> None:
    """Outbound replies and reports as durable obligations, and the inbound updates already
    acted on (so a redelivered update is never acted on twice)."""
    with SqliteStore.transaction(db.conn):
        db.execute(_DELIVERIES)
        db.execute("CREATE INDEX IF NOT EXISTS idx_deliveries_state ON deliveries(state, id)")
        db.execute(_HANDLED)


_APPROVALS = """
CREATE TABLE IF NOT EXISTS approval_requests (
  token TEXT PRIMARY KEY,
  chat_id INTEGER NOT NULL,
  state TEXT NOT NULL,
  resolver TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
)"""


def m002_approval_requests(db: Any) -> None:
    """What became of each approval prompt, so a button pressed after a restart is told
    whether the request was answered (and how) or expired unanswered."""
    with SqliteStore.transaction(db.conn):
        db.execute(_APPROVALS)


def m003_offsets(db: Any) -> None:
    """The offset the poller confirmed up to, so a new poller starts where the last one ended."""
    with SqliteStore.transaction(db.conn):
        db.execute("CREATE TABLE IF NOT EXISTS offsets (bot_id INTEGER PRIMARY KEY, next_offset INTEGER NOT NULL)")


_HANDLED_BY_BOT = """
CREATE TABLE IF NOT EXISTS telegram_handled_updates (
  bot_id INTEGER NOT NULL,
  update_id INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  handled_at INTEGER NOT NULL,
  PRIMARY KEY (bot_id, update_id)
)"""

# the one bot a database's offsets name, when exactly one does: the rows of handled updates
# and deliveries from before they were keyed by bot are that bot's (else 0, a bot of no
# token: such handled updates match no update any more, and only an update then in flight
# and unconfirmed could come again; such deliveries are sent, settled and counted by no bot)
LEGACY_BOT = ("CASE WHEN (SELECT COUNT(*) FROM telegram_offsets) = 1 THEN (SELECT MIN(bot_id) FROM telegram_offsets) "
               "ELSE 0 END")


def m004_telegram_names_handled_by_bot(db: Any) -> None:
    """The fleet database's names (telegram_*), so the store's SQL is one text; the sender of
    each attempt; handled updates keyed by bot, so bots sharing records never see each
    other's update ids as handled."""
    with SqliteStore.transaction(db.conn):
        tables = set(db.table_names())
        for old in ("deliveries", "approval_requests", "offsets"):
            if old in tables:
                db.execute(f"ALTER TABLE {old} RENAME TO telegram_{old}")
        if "sender" not in db["telegram_deliveries"].columns_dict:
            db.execute("ALTER TABLE telegram_deliveries ADD COLUMN sender TEXT")
        db.execute(_HANDLED_BY_BOT)
        if "handled_updates" in tables:
            db.execute(f"INSERT OR IGNORE INTO telegram_handled_updates (bot_id, update_id, outcome, handled_at) "
                       f"SELECT {LEGACY_BOT}, update_id, outcome, handled_at FROM handled_updates")
            db.execute("DROP TABLE handled_updates")


def m005_deliveries_by_bot(db: Any) -> None:
    """Each delivery names the bot that owes it, so a store opened for one bot resumes, settles
    and counts only that bot's (a file whose token changed keeps the other bot's for it)."""
    with SqliteStore.transaction(db.conn):
        if "bot_id" not in db["telegram_deliveries"].columns_dict:
            db.execute("ALTER TABLE telegram_deliveries ADD COLUMN bot_id INTEGER NOT NULL DEFAULT 0")
            db.execute(f"UPDATE telegram_deliveries SET bot_id = {LEGACY_BOT}")
        db.execute("CREATE INDEX IF NOT EXISTS idx_telegram_deliveries_bot ON telegram_deliveries(bot_id, state, id)")


MIGRATIONS = (m001_deliveries, m002_approval_requests, m003_offsets, m004_telegram_names_handled_by_bot,
              m005_deliveries_by_bot)


PG_STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("telegram.m001_deliveries", (
        # `sender` names the process that marked a chunk attempting: only a dead sender's
        # attempts are settled uncertain (a live host of the fleet may be mid-send)
        """CREATE TABLE IF NOT EXISTS telegram_deliveries (
             id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
             kind TEXT NOT NULL,
             chat_id BIGINT NOT NULL,
             session_id TEXT,
             turn_id TEXT UNIQUE,
             body TEXT,
             formatted BOOLEAN NOT NULL DEFAULT false,
             state TEXT NOT NULL CHECK (state IN ('pending', 'attempting', 'delivered', 'failed', 'uncertain')),
             chunks_total INTEGER NOT NULL DEFAULT 0,
             chunks_sent INTEGER NOT NULL DEFAULT 0,
             message_ids TEXT NOT NULL DEFAULT '[]',
             parse_fallbacks INTEGER NOT NULL DEFAULT 0,
             error TEXT,
             sender TEXT,
             created_at BIGINT NOT NULL,
             updated_at BIGINT NOT NULL)""",
        "CREATE INDEX IF NOT EXISTS telegram_deliveries_state ON telegram_deliveries (state, id)",
        """CREATE TABLE IF NOT EXISTS telegram_handled_updates (
             update_id BIGINT PRIMARY KEY,
             outcome TEXT NOT NULL,
             handled_at BIGINT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS telegram_approval_requests (
             token TEXT PRIMARY KEY,
             chat_id BIGINT NOT NULL,
             state TEXT NOT NULL,
             resolver TEXT,
             created_at BIGINT NOT NULL,
             updated_at BIGINT NOT NULL)""",
        # the offset every poller of the fleet starts from, and which process took the lease last
        """CREATE TABLE IF NOT EXISTS telegram_offsets (
             bot_id BIGINT PRIMARY KEY,
             next_offset BIGINT NOT NULL)""",
        """CREATE TABLE IF NOT EXISTS telegram_pollers (
             bot_id BIGINT PRIMARY KEY,
             host TEXT NOT NULL,
             pid INTEGER NOT NULL,
             since TIMESTAMPTZ NOT NULL)""",
    )),
    ("telegram.m002_handled_by_bot", (
        # handled updates keyed by bot: two fleets with different bots on one database each
        # handle their own update ids (legacy rows go to the one bot the offsets name, else 0)
        "ALTER TABLE telegram_handled_updates ADD COLUMN IF NOT EXISTS bot_id BIGINT NOT NULL DEFAULT 0",
        f"UPDATE telegram_handled_updates SET bot_id = {LEGACY_BOT} WHERE bot_id = 0",
        "ALTER TABLE telegram_handled_updates DROP CONSTRAINT IF EXISTS telegram_handled_updates_pkey",
        "ALTER TABLE telegram_handled_updates ADD PRIMARY KEY (bot_id, update_id)",
        "ALTER TABLE telegram_handled_updates ALTER COLUMN bot_id DROP DEFAULT",
    )),
    ("telegram.m003_deliveries_by_bot", (
        # deliveries keyed by bot: two fleets with different bots on one database each resume
        # (send with their own token) and count only their own; legacy rows as in m002.
        # Approval prompts stay unkeyed: a prompt's token is random (72 bits) and a button
        # press carries only a token its own bot sent, so no bot can read another's prompt
        "ALTER TABLE telegram_deliveries ADD COLUMN IF NOT EXISTS bot_id BIGINT NOT NULL DEFAULT 0",
        f"UPDATE telegram_deliveries SET bot_id = {LEGACY_BOT} WHERE bot_id = 0",
        "ALTER TABLE telegram_deliveries ALTER COLUMN bot_id DROP DEFAULT",
        "CREATE INDEX IF NOT EXISTS telegram_deliveries_bot ON telegram_deliveries (bot_id, state, id)",
    )),
)
