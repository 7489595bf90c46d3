"""Migrations of telegram.sqlite: functions named m00N_..., never renamed or reordered,
each idempotent; storage.sqlite_migrations applies them."""

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


MIGRATIONS = (m001_deliveries, m002_approval_requests, m003_offsets)
