"""The SQL of every store operation, as plain functions of a connection.

The writer thread runs them inside its transaction, reader connections run the read-only ones.
Conditional writes report success through RETURNING (or `changes()`), never through the
driver's rowcount, so the same statements run on any DB-API-like connection (apsw included,
which a power-loss test VFS needs). Every cursor is drained so no statement is left running
when the writer releases a savepoint or commits.
"""

from __future__ import annotations

from typing import Any

Conn = Any  # sqlite3.Connection or anything with execute(sql, params) -> cursor


def append(conn: Conn, stream: str, body: str, written_at: float) -> int:
    seq = conn.execute(
        "INSERT INTO store_streams (stream, last_seq) VALUES (?, 1) "
        "ON CONFLICT (stream) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq",
        (stream,)).fetchall()[0][0]
    conn.execute("INSERT INTO store_records (stream, seq, body, written_at) VALUES (?, ?, ?, ?)",
                 (stream, seq, body, written_at)).fetchall()
    return int(seq)


def read(conn: Conn, stream: str, after_seq: int, limit: int | None) -> list[tuple[int, str, float]]:
    return conn.execute(
        "SELECT seq, body, written_at FROM store_records WHERE stream = ? AND seq > ? ORDER BY seq LIMIT ?",
        (stream, after_seq, -1 if limit is None else limit)).fetchall()


def last_seq(conn: Conn, stream: str) -> int:
    rows = conn.execute("SELECT last_seq FROM store_streams WHERE stream = ?", (stream,)).fetchall()
    return int(rows[0][0]) if rows else 0


def drop_through(conn: Conn, stream: str, seq: int) -> int:
    conn.execute("DELETE FROM store_records WHERE stream = ? AND seq <= ?", (stream, seq)).fetchall()
    return int(conn.execute("SELECT changes()").fetchall()[0][0])


def get(conn: Conn, key: str) -> str | None:
    rows = conn.execute("SELECT value FROM store_kv WHERE key = ?", (key,)).fetchall()
    return rows[0][0] if rows else None


def put(conn: Conn, key: str, value: str) -> None:
    conn.execute("INSERT INTO store_kv (key, value) VALUES (?, ?) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value)).fetchall()


def write_if_absent(conn: Conn, key: str, value: str) -> bool:
    rows = conn.execute("INSERT INTO store_kv (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING "
                        "RETURNING key", (key, value)).fetchall()
    return bool(rows)


def compare_and_set(conn: Conn, key: str, expected: str, new: str | None) -> bool:
    if new is None:
        rows = conn.execute("DELETE FROM store_kv WHERE key = ? AND value = ? RETURNING key",
                            (key, expected)).fetchall()
    else:
        rows = conn.execute("UPDATE store_kv SET value = ? WHERE key = ? AND value = ? RETURNING key",
                            (new, key, expected)).fetchall()
    return bool(rows)


def claim(conn: Conn, key: str) -> str | None:
    rows = conn.execute("DELETE FROM store_kv WHERE key = ? RETURNING value", (key,)).fetchall()
    return rows[0][0] if rows else None


def scan(conn: Conn, prefix: str, upper: str | None, after: str | None, limit: int | None) -> list[tuple[str, str]]:
    sql = "SELECT key, value FROM store_kv WHERE key >= ?"
    params: list[Any] = [prefix]
    if upper is not None:
        sql += " AND key < ?"
        params.append(upper)
    if after is not None:
        sql += " AND key > ?"
        params.append(after)
    sql += " ORDER BY key LIMIT ?"
    params.append(-1 if limit is None else limit)
    return conn.execute(sql, params).fetchall()
