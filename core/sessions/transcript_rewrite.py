"""The raw row operations behind the two transcript rewrites (settling and compaction).

The transcript refuses UPDATE, so a rewrite is DELETE + INSERT inside the caller's
transaction. Rows that move are copied column for column, including any column a later
migration added, so a rewrite never drops what it does not know about.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from atomic_agent.sessions.transcript_entry import TranscriptEntry

ENTRY_COLUMNS = ("session_id", "seq", "turn_index", "kind", "text", "tool", "args", "status", "reason",
                 "reasoning", "details", "step", "batch_index", "created_at")


def _json(value: Any) -> str | None:
    # the same encoding SessionStore.append uses, so a settled row reads back like an appended one
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def read_raw_rows(conn: sqlite3.Connection, session_id: str, after_seq: int) -> list[dict[str, Any]]:
    """Every column of the rows with seq > `after_seq`, in seq order."""
    cursor = conn.execute("select * from transcript where session_id = ? and seq > ? order by seq",
                          [session_id, after_seq])
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row)) for row in cursor.fetchall()]


def delete_rows(conn: sqlite3.Connection, session_id: str, *, after_seq: int | None = None,
                upto_seq: int | None = None) -> int:
    """Delete rows with seq > after_seq (or seq <= upto_seq); returns how many went."""
    if after_seq is not None:
        return conn.execute("delete from transcript where session_id = ? and seq > ?", [session_id, after_seq]).rowcount
    return conn.execute("delete from transcript where session_id = ? and seq <= ?", [session_id, upto_seq]).rowcount


def insert_raw_row(conn: sqlite3.Connection, row: dict[str, Any], seq: int) -> None:
    columns = list(row)
    values = [seq if c == "seq" else row[c] for c in columns]
    conn.execute(f"insert into transcript ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})", values)


def insert_entry(conn: sqlite3.Connection, session_id: str, entry: TranscriptEntry, seq: int, created_at: str) -> None:
    conn.execute(
        f"insert into transcript ({', '.join(ENTRY_COLUMNS)}) values ({', '.join('?' for _ in ENTRY_COLUMNS)})",
        [session_id, seq, entry.turn_index, entry.kind, entry.text, entry.tool, _json(entry.args), entry.status,
         entry.reason, entry.reasoning, _json(entry.details), entry.step, entry.batch_index,
         entry.created_at or created_at])


def touch_session(conn: sqlite3.Connection, session_id: str, now: str) -> None:
    conn.execute("update sessions set updated_at = ? where id = ?", [now, session_id])


def fingerprint(rows: Sequence[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """A comparable copy of raw rows (to prove a snapshot is still what the store holds)."""
    return [tuple(sorted(row.items())) for row in rows]
