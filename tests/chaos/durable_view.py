"""Read the state dir with a fresh connection, the way a new process would."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import attrs

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


def read_state(state_dir: Path) -> DurableView:
    conn = sqlite3.connect(state_dir / "sessions.sqlite")
    try:
        integrity = conn.execute("pragma integrity_check").fetchone()[0]
        transcript: dict[str, list[dict[str, Any]]] = {}
        for row in _rows(conn, "select * from transcript order by session_id, seq"):
            transcript.setdefault(row["session_id"], []).append(row)
        turns = {r["turn_id"]: r for r in _rows(conn, "select * from turns")}
        audit = _rows(conn, "select * from turn_audit order by audit_id")
        steers = _rows(conn, "select * from steer_queue")
    finally:
        conn.close()
    return DurableView(integrity, transcript, turns, audit, steers)
