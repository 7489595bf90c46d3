"""Copy an embedded state dir's session state (sessions.sqlite) into an empty PostgreSQL
database, and back again (`copy_back_to_sqlite`: into an empty sessions.sqlite), verified: every table's row count and a hash of its rows must match on both sides
before the copy commits, in one transaction, or nothing is kept.

What is copied: sessions, transcripts, the turn ledger and its audit, queued steers and
idempotency keys, each row with every column; the admission counter and the id counters
move past every number the SQLite file ever handed out (ids are never reused). The source
is read from one snapshot, so a process still writing to it cannot tear the copy.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import attrs

# table -> its primary key (what the copy orders by)
TABLES: dict[str, tuple[str, ...]] = {
    "sessions": ("id",),
    "transcript": ("session_id", "seq"),
    "turns": ("turn_id",),
    "turn_audit": ("audit_id",),
    "steer_queue": ("steer_id",),
    "idempotency_keys": ("key",),
}
IDENTITY_TABLES = {"turn_audit": "audit_id", "steer_queue": "steer_id"}


class StateCopyError(RuntimeError):
    """The copy was refused or did not verify; nothing was kept in the target."""


@attrs.frozen
class TableCopy:
    table: str
    rows: int
    digest: str  # sha256 of the rows, in key order, as JSON


def rows_digest(rows: list[tuple[Any, ...]]) -> str:
    """Order-independent of how each database sorts text: rows are serialised, then sorted."""
    encoded = sorted(json.dumps(list(row), ensure_ascii=False, default=str) for row in rows)
    digest = hashlib.sha256()
    for line in encoded:
        digest.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()


def _columns(pg: Any, table: str) -> list[str]:
    rows = pg.execute("select column_name from information_schema.columns where table_schema = current_schema() "
                      "and table_name = %s order by ordinal_position", [table]).fetchall()
    return [r[0] for r in rows]


def copy_sessions_state(sqlite_conn: Any, pg: Any) -> list[TableCopy]:
    """Copy inside one PostgreSQL transaction on `pg` (an autocommit connection whose schema
    is migrated); StateCopyError, with nothing written, when the target is not empty or a
    table does not verify."""
    import psycopg

    done: list[TableCopy] = []
    sqlite_conn.execute("BEGIN")  # one snapshot of the source
    try:
        with pg.transaction():
            pg.execute("LOCK TABLE sessions, transcript, turns, turn_audit, steer_queue, idempotency_keys "
                       "IN SHARE ROW EXCLUSIVE MODE")  # no runtime writes to the target meanwhile
            held = {t: pg.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}
            if any(held.values()):
                raise StateCopyError("the target database is not empty (" + ", ".join(
                    f"{n} {t}" for t, n in held.items() if n) + "); migrate only into a new, empty database")
            for table, key in TABLES.items():
                columns = _columns(pg, table)
                source = sqlite_conn.execute(f"select {', '.join(columns)} from {table} "
                                             f"order by {', '.join(key)}").fetchall()
                overriding = " OVERRIDING SYSTEM VALUE" if table in IDENTITY_TABLES else ""
                if source:
                    with pg.cursor() as cursor:
                        cursor.executemany(
                            f"insert into {table} ({', '.join(columns)}){overriding} values "
                            f"({', '.join('%s' for _ in columns)})", source)
                copied = pg.execute(f"select {', '.join(columns)} from {table}").fetchall()
                expected, got = rows_digest(source), rows_digest(copied)
                if len(copied) != len(source) or got != expected:
                    raise StateCopyError(f"{table} did not verify: {len(source)} rows read, {len(copied)} written "
                                         f"(sha256 {expected[:12]} vs {got[:12]}); nothing was kept")
                done.append(TableCopy(table, len(source), expected))
            _advance_counters(sqlite_conn, pg)
    except psycopg.Error as exc:
        raise StateCopyError(f"the copy failed and was rolled back ({' '.join(str(exc).split())})") from None
    finally:
        sqlite_conn.execute("ROLLBACK")
    return done


def _advance_counters(sqlite_conn: Any, pg: Any) -> None:
    """Every counter past every number the source ever handed out (deleted rows included)."""
    counter = sqlite_conn.execute("select value from turn_counters where name = 'admission'").fetchone()
    highest = pg.execute("select coalesce(max(admitted_order), 0) from turns").fetchone()[0]
    order = max(int(counter[0]) if counter else 0, int(highest))
    pg.execute("select setval('turn_admission_order', greatest(%s, 1), %s)", [order, order > 0])
    for table, column in IDENTITY_TABLES.items():
        row = sqlite_conn.execute("select seq from sqlite_sequence where name = ?", [table]).fetchone()
        used = max(int(row[0]) if row else 0,
                   int(pg.execute(f"select coalesce(max({column}), 0) from {table}").fetchone()[0]))
        pg.execute(f"select setval(pg_get_serial_sequence('{table}', '{column}'), greatest(%s, 1), %s)",
                   [used, used > 0])


def _sqlite_columns(sqlite_conn: Any, table: str) -> list[str]:
    return [r[1] for r in sqlite_conn.execute(f"pragma table_info({table})").fetchall()]


def copy_back_to_sqlite(pg: Any, sqlite_conn: Any) -> list[TableCopy]:
    """The reverse: the PostgreSQL session state into an empty sessions.sqlite, inside one
    SQLite transaction, read from one PostgreSQL snapshot (REPEATABLE READ), every table
    verified by count and hash; the counters continue past every number PostgreSQL handed
    out. StateCopyError, with nothing written, when the file is not empty or a table does not
    verify. `sqlite_conn` is the store's connection (autocommit; this opens the transaction)."""
    import sqlite3

    import psycopg

    done: list[TableCopy] = []
    try:
        with pg.transaction():
            pg.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            sqlite_conn.execute("BEGIN IMMEDIATE")  # no writer on the file meanwhile
            try:
                held = {t: sqlite_conn.execute(f"select count(*) from {t}").fetchone()[0] for t in TABLES}
                if any(held.values()):
                    raise StateCopyError("sessions.sqlite in this state dir is not empty (" + ", ".join(
                        f"{n} {t}" for t, n in held.items() if n) + "); copy back only into a state dir without "
                        "session state (move sessions.sqlite aside first)")
                for table, key in TABLES.items():
                    wanted = set(_sqlite_columns(sqlite_conn, table))
                    columns = [c for c in _columns(pg, table) if c in wanted]
                    source = pg.execute(f"select {', '.join(columns)} from {table} "
                                        f"order by {', '.join(key)}").fetchall()
                    if source:
                        sqlite_conn.executemany(f"insert into {table} ({', '.join(columns)}) values "
                                                f"({', '.join('?' for _ in columns)})", source)
                    copied = sqlite_conn.execute(f"select {', '.join(columns)} from {table}").fetchall()
                    expected, got = rows_digest(source), rows_digest(copied)
                    if len(copied) != len(source) or got != expected:
                        raise StateCopyError(f"{table} did not verify: {len(source)} rows read, {len(copied)} "
                                             f"written (sha256 {expected[:12]} vs {got[:12]}); nothing was kept")
                    done.append(TableCopy(table, len(source), expected))
                _carry_counters_back(pg, sqlite_conn)
            except BaseException:
                sqlite_conn.execute("ROLLBACK")
                raise
            sqlite_conn.execute("COMMIT")
    except (psycopg.Error, sqlite3.Error) as exc:
        raise StateCopyError(f"the copy failed and was rolled back ({' '.join(str(exc).split())})") from None
    return done


def _carry_counters_back(pg: Any, sqlite_conn: Any) -> None:
    """The file's counters past every number the database handed out (deleted rows included)."""
    last, called = pg.execute("select last_value, is_called from turn_admission_order").fetchone()
    order = int(last) if called else int(last) - 1
    sqlite_conn.execute("insert into turn_counters (name, value) values ('admission', ?) on conflict(name) do "
                        "update set value = max(value, excluded.value)", [order])
    for table, column in IDENTITY_TABLES.items():
        sequence = pg.execute("select pg_get_serial_sequence(%s, %s)", [table, column]).fetchone()[0]
        last, called = pg.execute(f"select last_value, is_called from {sequence}").fetchone()
        used = int(last) if called else int(last) - 1
        if sqlite_conn.execute("select 1 from sqlite_sequence where name = ?", [table]).fetchone():
            sqlite_conn.execute("update sqlite_sequence set seq = max(seq, ?) where name = ?", [used, table])
        else:
            sqlite_conn.execute("insert into sqlite_sequence (name, seq) values (?, ?)", [table, used])
