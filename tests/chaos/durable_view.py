"""Read the session state with a fresh connection, the way a new process would: the state
dir's sessions.sqlite, or the world's PostgreSQL database (the same tables and columns)."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.conversation_reader import summary_fields


def _rows(conn: sqlite3.Connection, sql: str) -> list[dict[str, Any]]:
    cur = conn.execute(sql)
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]


@attrs.frozen
class DurableView:
    integrity: str
    transcript: dict[str, list[dict[str, Any]]]  # session -> rows in seq order
    turns: dict[str, dict[str, Any]]  # turn_id -> row
    audit: list[dict[str, Any]]
    steers: list[dict[str, Any]]

    def virtual_users(self, session_id: str) -> list[str]:
        """User message ids in conversation order; a compaction row stands for the ids it summarised."""
        out: list[str] = []
        for row in self.transcript.get(session_id, []):
            if row["kind"] == "user":
                out.append(row["text"])
            elif row["kind"] == "compaction":
                out.extend(summary_fields(row["text"] or "").get("seen", []))
        return out

    def replies(self, session_id: str) -> list[str]:
        out: list[str] = []
        for row in self.transcript.get(session_id, []):
            if row["kind"] == "assistant_reply":
                out.append(row["text"])
            elif row["kind"] == "compaction":
                out.extend(summary_fields(row["text"] or "").get("replies", []))
        return out


def read_state(state_dir: Path, database: ChaosDatabase | None = None) -> DurableView:
    if database is not None:
        return _read_postgresql(database)
    conn = sqlite3.connect(state_dir / "sessions.sqlite")
    try:
        integrity = conn.execute("pragma integrity_check").fetchone()[0]
        return _view(integrity, lambda sql: _rows(conn, sql))
    finally:
        conn.close()


def _read_postgresql(database: ChaosDatabase) -> DurableView:
    import psycopg

    with psycopg.connect(f"host=127.0.0.1 port={database.port} dbname={database.name} user=agent",
                         password=database.password, autocommit=True) as conn:
        conn.execute("begin isolation level repeatable read read only")  # one snapshot for every table

        def rows(sql: str) -> list[dict[str, Any]]:
            cur = conn.execute(sql)
            cols = [d.name for d in cur.description or ()]
            return [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]

        # PostgreSQL has no integrity_check: the server's own checksumming is its business; a
        # row the schema's constraints forbid could not have been written
        return _view("ok", rows)


def _view(integrity: str, rows: Callable[[str], list[dict[str, Any]]]) -> DurableView:
    transcript: dict[str, list[dict[str, Any]]] = {}
    for row in rows("select * from transcript order by session_id, seq"):
        transcript.setdefault(row["session_id"], []).append(row)
    turns = {r["turn_id"]: r for r in rows("select * from turns")}
    audit = rows("select * from turn_audit order by audit_id")
    steers = rows("select * from steer_queue")
    return DurableView(integrity, transcript, turns, audit, steers)
