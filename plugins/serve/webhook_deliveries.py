"""`<state>/serve/webhooks.sqlite`: which webhook deliveries this state dir already accepted.

Two records, both durable (FULL: each was acknowledged to a sender) so a restart forgets
nothing a replay could exploit:

- `seen`: the marks of every accepted signed delivery (see `webhook_auth`): a timestamped
  signature until its timestamp is stale (it is refused as stale after that anyway), a
  GitHub signature or delivery id for good (GitHub signs no time).
- `idempotency`: per endpoint, each `Idempotency-Key` with a digest of the body it came
  with and the task it created, for KEY_TTL_S. The same key and body get the first answer
  again; the same key with another body is refused; a key whose first call is still being
  handled is reported as such (the claim is committed before the task is created, so two
  racing retries cannot both create one).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import SqliteStore

DB_DIR = "serve"
DB_FILE = "webhooks.sqlite"
KEY_TTL_S = 7 * 24 * 3600
PENDING_TTL_S = 300


def m001_webhook_deliveries(db: Any) -> None:
    """Seen signatures and delivery ids; Idempotency-Keys and the task each created."""
    with SqliteStore.transaction(db.conn):
        db.conn.execute("CREATE TABLE IF NOT EXISTS seen (endpoint TEXT NOT NULL, mark TEXT NOT NULL, "
                        "expires_at REAL, PRIMARY KEY (endpoint, mark))")
        db.conn.execute("CREATE INDEX IF NOT EXISTS seen_expiry ON seen (expires_at)")
        db.conn.execute("CREATE TABLE IF NOT EXISTS idempotency (endpoint TEXT NOT NULL, key TEXT NOT NULL, "
                        "fingerprint TEXT NOT NULL, task_id TEXT, session_id TEXT, created_at REAL NOT NULL, "
                        "PRIMARY KEY (endpoint, key))")
        db.conn.execute("CREATE INDEX IF NOT EXISTS idempotency_age ON idempotency (created_at)")


MIGRATIONS = [m001_webhook_deliveries]


@attrs.frozen
class KeyRecord:
    fingerprint: str
    task_id: str | None  # None: the first call is still being handled
    session_id: str | None


def body_fingerprint(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()


class WebhookDeliveries(SqliteStore):
    migrations = MIGRATIONS

    def __init__(self, state_dir: Path) -> None:
        path = state_dir / DB_DIR / DB_FILE
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        super().__init__(path)

    def claim(self, endpoint: str, marks: tuple[str, ...], keep_until: float | None, now: float) -> str | None:
        """Record `marks` as seen; the first one already seen (nothing recorded then), or None."""
        if not marks:
            return None
        with self.write():
            self.conn.execute("DELETE FROM seen WHERE expires_at IS NOT NULL AND expires_at < ?", (now,))
            for mark in marks:
                if self.conn.execute("SELECT 1 FROM seen WHERE endpoint = ? AND mark = ?",
                                     (endpoint, mark)).fetchone():
                    return mark
            self.conn.executemany("INSERT INTO seen (endpoint, mark, expires_at) VALUES (?, ?, ?)",
                                  [(endpoint, mark, keep_until) for mark in marks])
        return None

    def begin_key(self, endpoint: str, key: str, fingerprint: str, now: float) -> KeyRecord | None:
        """Claim `key` for this call (None), or the record an earlier call left."""
        with self.write():
            # a claim left by a process that died before creating its task frees up after PENDING_TTL_S
            self.conn.execute("DELETE FROM idempotency WHERE created_at < ? OR (task_id IS NULL AND created_at < ?)",
                              (now - KEY_TTL_S, now - PENDING_TTL_S))
            row = self.conn.execute("SELECT fingerprint, task_id, session_id FROM idempotency WHERE endpoint = ? "
                                    "AND key = ?", (endpoint, key)).fetchone()
            if row is not None:
                return KeyRecord(row[0], row[1], row[2])
            self.conn.execute("INSERT INTO idempotency (endpoint, key, fingerprint, created_at) VALUES (?, ?, ?, ?)",
                              (endpoint, key, fingerprint, now))
        return None

    def finish_key(self, endpoint: str, key: str, task_id: str, session_id: str | None) -> None:
        with self.write():
            self.conn.execute("UPDATE idempotency SET task_id = ?, session_id = ? WHERE endpoint = ? AND key = ?",
                              (task_id, session_id, endpoint, key))

    def release_key(self, endpoint: str, key: str) -> None:
        """The call that claimed `key` created nothing: a retry may try again."""
        with self.write():
            self.conn.execute("DELETE FROM idempotency WHERE endpoint = ? AND key = ? AND task_id IS NULL",
                              (endpoint, key))
