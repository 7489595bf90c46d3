"""The telegram plugin's tables in the fleet's PostgreSQL database (`shared_database`): the
steps `telegram.mNNN_...`, never renamed or reordered, each idempotent, applied by the
shared migration runner. The same records as telegram.sqlite, shared by every host."""

from __future__ import annotations

STEPS: tuple[tuple[str, tuple[str, ...]], ...] = (
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
)
