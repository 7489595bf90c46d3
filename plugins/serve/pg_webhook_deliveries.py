"""The accepted webhook deliveries in the fleet's PostgreSQL (the `shared_database` service),
so a delivery retried or replayed to another host of the fleet is claimed once: the same
records and answers as `webhooks.sqlite` (webhook_deliveries), kept in the tables
`webhook_seen` and `webhook_idempotency` (schema steps `serve.mNNN_...`).

A mark or key two hosts insert at once is decided by the primary key (the second insert waits
for the first commit, then finds it). The idempotency claims' ages use the database's clock,
so a host with a skewed clock cannot free another host's claim early; a signature's
`keep_until` comes from the signed timestamp as on SQLite."""

from __future__ import annotations

from typing import Any

from .webhook_deliveries import KEY_TTL_S, PENDING_TTL_S, KeyRecord

SCHEMA_OWNER = "serve"
STEPS: list[tuple[str, tuple[str, ...]]] = [(f"{SCHEMA_OWNER}.m001_webhook_deliveries", (
    "CREATE TABLE IF NOT EXISTS webhook_seen (endpoint TEXT NOT NULL, mark TEXT NOT NULL, "
    "expires_at DOUBLE PRECISION, PRIMARY KEY (endpoint, mark))",
    "CREATE INDEX IF NOT EXISTS webhook_seen_expiry ON webhook_seen (expires_at)",
    "CREATE TABLE IF NOT EXISTS webhook_idempotency (endpoint TEXT NOT NULL, key TEXT NOT NULL, "
    "fingerprint TEXT NOT NULL, task_id TEXT, session_id TEXT, created_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
    "PRIMARY KEY (endpoint, key))",
    "CREATE INDEX IF NOT EXISTS webhook_idempotency_age ON webhook_idempotency (created_at)",
))]


class _AlreadySeen(Exception):
    """Rolls back the marks this call inserted before it met one already seen."""

    def __init__(self, mark: str) -> None:
        super().__init__(mark)
        self.mark = mark


class PgWebhookDeliveries:
    def __init__(self, shared: Any) -> None:
        self.shared = shared
        shared.ensure_schema(SCHEMA_OWNER, STEPS)

    def claim(self, endpoint: str, marks: tuple[str, ...], keep_until: float | None, now: float) -> str | None:
        """Record `marks` as seen; the first one already seen (nothing recorded then), or None."""
        if not marks:
            return None
        try:
            with self.shared.transaction() as conn:
                conn.execute("DELETE FROM webhook_seen WHERE expires_at IS NOT NULL AND expires_at < %s", [now])
                for mark in marks:
                    if conn.execute("INSERT INTO webhook_seen (endpoint, mark, expires_at) VALUES (%s, %s, %s) "
                                    "ON CONFLICT DO NOTHING RETURNING 1", [endpoint, mark, keep_until]).fetchone() \
                            is None:
                        raise _AlreadySeen(mark)
        except _AlreadySeen as seen:
            return seen.mark
        return None

    def begin_key(self, endpoint: str, key: str, fingerprint: str, now: float) -> KeyRecord | None:
        """Claim `key` for this call (None), or the record an earlier call (on any host) left."""
        with self.shared.transaction() as conn:
            # a claim left by a process that died before creating its task frees up after PENDING_TTL_S
            conn.execute("DELETE FROM webhook_idempotency WHERE created_at < now() - make_interval(secs => %s) "
                         "OR (task_id IS NULL AND created_at < now() - make_interval(secs => %s))",
                         [KEY_TTL_S, PENDING_TTL_S])
            if conn.execute("INSERT INTO webhook_idempotency (endpoint, key, fingerprint) VALUES (%s, %s, %s) "
                            "ON CONFLICT DO NOTHING RETURNING 1", [endpoint, key, fingerprint]).fetchone():
                return None
            row = conn.execute("SELECT fingerprint, task_id, session_id FROM webhook_idempotency WHERE endpoint = %s "
                               "AND key = %s", [endpoint, key]).fetchone()
        return KeyRecord(row[0], row[1], row[2])

    def finish_key(self, endpoint: str, key: str, task_id: str, session_id: str | None) -> None:
        with self.shared.transaction() as conn:
            conn.execute("UPDATE webhook_idempotency SET task_id = %s, session_id = %s WHERE endpoint = %s AND key = %s",
                         [task_id, session_id, endpoint, key])

    def release_key(self, endpoint: str, key: str) -> None:
        """The call that claimed `key` created nothing: a retry may try again."""
        with self.shared.transaction() as conn:
            conn.execute("DELETE FROM webhook_idempotency WHERE endpoint = %s AND key = %s AND task_id IS NULL",
                         [endpoint, key])

    def close(self) -> None:
        return None  # the pool is the shared database's
