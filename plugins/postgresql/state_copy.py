"""Copy a state dir's whole embedded state into an empty PostgreSQL database
(`copy_into_postgresql`), and back into a state dir without any (`copy_back_to_state_dir`),
verified: every table's row count and a hash of its rows must match on both sides before the
copy is kept, or nothing is.

What is copied is what the plugins declare (postgresql_contract.SHARED_STATE_SERVICE): each
SQLite file's tables with every column both sides have, and each non-SQLite state file (the
approval audit's JSON lines, MCP drift approvals) as its table's rows. The copy in is ONE
PostgreSQL transaction, the source files each read from one snapshot; the copy back holds one
transaction open on every SQLite file and commits them only once every table and file
verified. Id counters (identities, AUTOINCREMENT, the admission order) continue past every
number the source ever handed out, deleted rows included: ids are never reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs

from .postgresql_contract import SharedFileState, SharedSqliteState

ADMISSION_TABLE = "turns"  # the core's ledger: its admission counter moves with it


class StateCopyError(RuntimeError):
    """The copy was refused or did not verify; nothing was kept in the target."""


@attrs.frozen
class TableCopy:
    table: str  # the PostgreSQL table
    rows: int
    digest: str  # sha256 of the rows (rows_digest)
    owner: str = ""  # whose state ("" the core's)


def rows_digest(rows: Sequence[Sequence[Any]]) -> str:
    """Independent of how each database sorts text: rows are serialised, then sorted; a JSON
    value (a dict) is serialised with sorted keys, so jsonb's key order does not count."""
    encoded = sorted(json.dumps(list(row), ensure_ascii=False, default=str, sort_keys=True) for row in rows)
    digest = hashlib.sha256()
    for line in encoded:
        digest.update(line.encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()


@attrs.frozen
class Plan:
    """One table's copy: the columns both sides have, and how each side reads and writes them."""

    table: str
    sqlite_table: str
    key: tuple[str, ...]
    identity: str
    columns: tuple[str, ...]
    pg_read: tuple[str, ...]
    pg_write: tuple[str, ...]
    sqlite_read: tuple[str, ...]
    sqlite_write: tuple[str, ...]

    def pg_select(self) -> str:
        return f"select {', '.join(self.pg_read)} from {self.table} order by {', '.join(self.key)}"

    def pg_insert(self) -> str:
        overriding = " overriding system value" if self.identity in self.columns else ""
        return (f"insert into {self.table} ({', '.join(self.columns)}){overriding} "
                f"values ({', '.join(self.pg_write)})")

    def sqlite_select(self) -> str:
        return f"select {', '.join(self.sqlite_read)} from {self.sqlite_table} order by {', '.join(self.key)}"

    def sqlite_insert(self) -> str:
        return (f"insert into {self.sqlite_table} ({', '.join(self.columns)}) "
                f"values ({', '.join(self.sqlite_write)})")


def _pg_columns(pg: Any, table: str) -> list[str]:
    rows = pg.execute("select column_name from information_schema.columns where table_schema = current_schema() "
                      "and table_name = %s order by ordinal_position", [table]).fetchall()
    return [r[0] for r in rows]


def plans_of(state: SharedSqliteState, pg: Any, sqlite_conn: Any) -> list[Plan]:
    plans = []
    for table, sqlite_table, key, identity in state.tables:
        present = {r[1] for r in sqlite_conn.execute(f"pragma table_info({sqlite_table})").fetchall()}
        columns = tuple(c for c in _pg_columns(pg, table) if c in present)
        forms = [state.forms.get(f"{table}.{c}", (c, "%s", c, "?")) for c in columns]
        plans.append(Plan(table, sqlite_table, tuple(key), identity, columns, *(tuple(f[i] for f in forms)
                                                                                 for i in range(4))))
    return plans


def _file_plan(state: SharedFileState) -> Plan:
    forms = [state.forms.get(c, (c, "%s")) for c in state.columns]
    return Plan(state.table, "", (state.key,), state.identity, tuple(state.columns),
                tuple(f[0] for f in forms), tuple(f[1] for f in forms), (), ())


def _pg_params(row: Sequence[Any]) -> list[Any]:
    """JSON documents (a dict or list, e.g. an MCP record) go to jsonb as JSON."""
    from psycopg.types.json import Jsonb

    return [Jsonb(v) if isinstance(v, (dict, list)) else v for v in row]


def _verified(table: str, source: Sequence[Any], copied: Sequence[Any], owner: str) -> TableCopy:
    expected, got = rows_digest(source), rows_digest(copied)
    if len(copied) != len(source) or got != expected:
        raise StateCopyError(f"{table} did not verify: {len(source)} rows read, {len(copied)} written "
                             f"(sha256 {expected[:12]} vs {got[:12]}); nothing was kept")
    return TableCopy(table, len(source), expected, owner)


def _declared_tables(states: Sequence[Any]) -> list[str]:
    return [t for s in states for t in ([s.table] if isinstance(s, SharedFileState) else [t[0] for t in s.tables])]


@contextlib.contextmanager
def _sources(states: Sequence[Any], state_dir: Path) -> Iterator[list[tuple[Any, Any]]]:
    """Each SQLite state with its file's connection (None when the state dir has no such file)."""
    with contextlib.ExitStack() as stack:
        yield [(s, stack.enter_context(s.open_sqlite(state_dir)) if (state_dir / s.path).exists() else None)
               for s in states if not isinstance(s, SharedFileState)]


Rows = Sequence[tuple[Any, ...]]  # as both databases and the state files hand rows out


class _Direction(Protocol):
    """How one direction reads a table on its source side, writes it on its target side and
    carries the table's id counters over; its transaction rules stay with its caller."""

    def read(self, sqlite_conn: Any, plan: Plan) -> Rows: ...

    def write(self, sqlite_conn: Any, plan: Plan, rows: Rows) -> None: ...

    def read_copied(self, sqlite_conn: Any, plan: Plan) -> Rows: ...

    def continue_counters(self, sqlite_conn: Any, plan: Plan) -> None: ...

    def read_file(self, state: SharedFileState) -> Rows: ...

    def write_file(self, state: SharedFileState, rows: Rows) -> None: ...

    def read_file_copied(self, state: SharedFileState) -> Rows: ...


def _copy_every_table(direction: _Direction, plans: Sequence[tuple[SharedSqliteState, Any, list[Plan]]],
                      files: Sequence[SharedFileState]) -> list[TableCopy]:
    """The copy plan both directions share: every SQLite file's tables in declared order, then
    the state files; each table verified by row count and SHA-256 of its rows, its counters
    continued past every id it handed out. A SQLite file absent (connection None) is empty."""
    done: list[TableCopy] = []
    for state, conn, table_plans in plans:
        if conn is None:
            done += [TableCopy(t[0], 0, rows_digest([]), state.owner) for t in state.tables]
            continue
        for plan in table_plans:
            source = direction.read(conn, plan)
            if source:
                direction.write(conn, plan, source)
            done.append(_verified(plan.table, source, direction.read_copied(conn, plan), state.owner))
            direction.continue_counters(conn, plan)
    for file_state in files:
        source = direction.read_file(file_state)
        if source:
            direction.write_file(file_state, source)
        done.append(_verified(file_state.table, source, direction.read_file_copied(file_state), file_state.owner))
    return done


def copy_into_postgresql(states: Sequence[Any], state_dir: Path, pg: Any) -> list[TableCopy]:
    """The state dir's state into the database on `pg` (an autocommit connection whose
    schema, every declared owner's, is migrated), in one transaction; StateCopyError, with
    nothing written, when the target holds any of it or a table does not verify."""
    import psycopg

    tables = _declared_tables(states)
    with _sources(states, state_dir) as sources:
        for _, conn in sources:
            if conn is not None:
                conn.execute("BEGIN")  # one snapshot of each source file
        try:
            with pg.transaction():
                # no runtime writes to the target meanwhile
                pg.execute(f"lock table {', '.join(tables)} in share row exclusive mode")
                held = {t: pg.execute(f"select count(*) from {t}").fetchone()[0] for t in tables}
                if any(held.values()):
                    raise StateCopyError("the target database is not empty (" + ", ".join(
                        f"{n} {t}" for t, n in held.items() if n) + "); migrate only into a new, empty database")
                plans = [(state, conn, plans_of(state, pg, conn) if conn is not None else []) for state, conn in sources]
                done = _copy_every_table(_IntoPostgresql(pg, state_dir), plans,
                                         [s for s in states if isinstance(s, SharedFileState)])
        except psycopg.Error as exc:
            raise StateCopyError(f"the copy failed and was rolled back ({' '.join(str(exc).split())})") from None
        finally:
            for _, conn in sources:
                if conn is not None:
                    conn.execute("ROLLBACK")
    return done


@attrs.frozen
class _IntoPostgresql:
    """SQLite files and state files into PostgreSQL."""

    pg: Any
    state_dir: Path

    def read(self, sqlite_conn: Any, plan: Plan) -> Rows:
        return sqlite_conn.execute(plan.sqlite_select()).fetchall()

    def write(self, sqlite_conn: Any, plan: Plan, rows: Rows) -> None:
        with self.pg.cursor() as cursor:  # in source order: an identity numbers a file's rows as the file did
            cursor.executemany(plan.pg_insert(), [_pg_params(r) for r in rows])

    def read_copied(self, sqlite_conn: Any, plan: Plan) -> Rows:
        return self.pg.execute(plan.pg_select()).fetchall()

    def continue_counters(self, sqlite_conn: Any, plan: Plan) -> None:
        if plan.identity:
            _advance_identity(sqlite_conn, self.pg, plan)
        if plan.table == ADMISSION_TABLE:
            _advance_admission(sqlite_conn, self.pg)

    def read_file(self, state: SharedFileState) -> Rows:
        return state.read_rows(self.state_dir)

    def write_file(self, state: SharedFileState, rows: Rows) -> None:
        self.write(None, _file_plan(state), rows)

    def read_file_copied(self, state: SharedFileState) -> Rows:
        return self.read_copied(None, _file_plan(state))


def _advance_identity(sqlite_conn: Any, pg: Any, plan: Plan) -> None:
    """The identity past every id the file ever handed out (deleted rows included)."""
    row = sqlite_conn.execute("select seq from sqlite_sequence where name = ?", [plan.sqlite_table]).fetchone()
    used = max(int(row[0]) if row else 0,
               int(pg.execute(f"select coalesce(max({plan.identity}), 0) from {plan.table}").fetchone()[0]))
    pg.execute(f"select setval(pg_get_serial_sequence('{plan.table}', '{plan.identity}'), greatest(%s, 1), %s)",
               [used, used > 0])


def _advance_admission(sqlite_conn: Any, pg: Any) -> None:
    counter = sqlite_conn.execute("select value from turn_counters where name = 'admission'").fetchone()
    highest = pg.execute("select coalesce(max(admitted_order), 0) from turns").fetchone()[0]
    order = max(int(counter[0]) if counter else 0, int(highest))
    pg.execute("select setval('turn_admission_order', greatest(%s, 1), %s)", [order, order > 0])


def copy_back_to_state_dir(states: Sequence[Any], pg: Any, state_dir: Path) -> list[TableCopy]:
    """The reverse: the database's state into a state dir that has none of it, each SQLite
    file created (or opened) through its own store, read from one PostgreSQL snapshot
    (REPEATABLE READ); the SQLite files commit only once every table and file verified, and a
    file written by this copy is removed again when anything did not. The counters continue
    past every number PostgreSQL handed out. StateCopyError when the state dir holds any of
    the state or a table does not verify."""
    import psycopg

    written: list[Path] = []
    with contextlib.ExitStack() as stack:
        opened = [(s, stack.enter_context(s.open_sqlite(state_dir))) for s in states
                  if not isinstance(s, SharedFileState)]
        try:
            with pg.transaction():
                pg.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                for _, conn in opened:
                    conn.execute("BEGIN IMMEDIATE")  # no writer on the file meanwhile
                try:
                    plans = [(state, conn, plans_of(state, pg, conn)) for state, conn in opened]
                    _refuse_held(plans, states, state_dir)
                    done = _copy_every_table(_BackToStateDir(pg, state_dir, written), plans,
                                             [s for s in states if isinstance(s, SharedFileState)])
                except BaseException:
                    for _, conn in opened:
                        conn.execute("ROLLBACK")
                    for path in written:
                        path.unlink(missing_ok=True)
                    raise
                for _, conn in opened:
                    conn.execute("COMMIT")
        except (psycopg.Error, sqlite3.Error) as exc:
            raise StateCopyError(f"the copy failed and was rolled back ({' '.join(str(exc).split())})") from None
    return done


@attrs.frozen
class _BackToStateDir:
    """PostgreSQL into SQLite files and state files; `written` collects each state file this
    copy wrote, for its caller to remove again when the copy is not kept."""

    pg: Any
    state_dir: Path
    written: list[Path]

    def read(self, sqlite_conn: Any, plan: Plan) -> Rows:
        return self.pg.execute(plan.pg_select()).fetchall()

    def write(self, sqlite_conn: Any, plan: Plan, rows: Rows) -> None:
        sqlite_conn.executemany(plan.sqlite_insert(), rows)

    def read_copied(self, sqlite_conn: Any, plan: Plan) -> Rows:
        return sqlite_conn.execute(plan.sqlite_select()).fetchall()

    def continue_counters(self, sqlite_conn: Any, plan: Plan) -> None:
        if plan.identity:
            _carry_identity_back(self.pg, sqlite_conn, plan)
        if plan.table == ADMISSION_TABLE:
            _carry_admission_back(self.pg, sqlite_conn)

    def read_file(self, state: SharedFileState) -> Rows:
        return self.read(None, _file_plan(state))

    def write_file(self, state: SharedFileState, rows: Rows) -> None:
        self.written.append(self.state_dir / state.path)
        state.write_rows(self.state_dir, rows)

    def read_file_copied(self, state: SharedFileState) -> Rows:
        return state.read_rows(self.state_dir)


def _refuse_held(plans: Sequence[tuple[Any, Any, list[Plan]]], states: Sequence[Any], state_dir: Path) -> None:
    held = {f"{plan.sqlite_table} ({state.path})": conn.execute(f"select count(*) from {plan.sqlite_table}")
            .fetchone()[0] for state, conn, file_plans in plans for plan in file_plans}
    held.update({s.path: len(s.read_rows(state_dir)) for s in states if isinstance(s, SharedFileState)})
    if any(held.values()):
        raise StateCopyError("this state dir is not empty (" + ", ".join(f"{n} rows in {t}" for t, n in held.items()
                                                                          if n) + "); copy back only into a new "
                             "state dir (or move those files aside first)")


def _carry_identity_back(pg: Any, sqlite_conn: Any, plan: Plan) -> None:
    sequence = pg.execute("select pg_get_serial_sequence(%s, %s)", [plan.table, plan.identity]).fetchone()[0]
    last, called = pg.execute(f"select last_value, is_called from {sequence}").fetchone()
    used = int(last) if called else int(last) - 1
    if sqlite_conn.execute("select 1 from sqlite_sequence where name = ?", [plan.sqlite_table]).fetchone():
        sqlite_conn.execute("update sqlite_sequence set seq = max(seq, ?) where name = ?", [used, plan.sqlite_table])
    else:
        sqlite_conn.execute("insert into sqlite_sequence (name, seq) values (?, ?)", [plan.sqlite_table, used])


def _carry_admission_back(pg: Any, sqlite_conn: Any) -> None:
    last, called = pg.execute("select last_value, is_called from turn_admission_order").fetchone()
    order = int(last) if called else int(last) - 1
    sqlite_conn.execute("insert into turn_counters (name, value) values ('admission', ?) on conflict(name) do "
                        "update set value = max(value, excluded.value)", [order])
