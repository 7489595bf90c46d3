"""The single writer of a SQLite store: one connection on one dedicated thread, group commit.

Callers submit *units* (one per `transaction()` block). The thread opens `BEGIN IMMEDIATE`,
opens a SAVEPOINT for the first unit and hands it the connection; the unit's statements then
run inline on the caller's thread (they take microseconds; a thread hop per statement cost
~100 us here, measured) under `conn_lock`, while the writer thread waits for the unit to end.
It RELEASEs the savepoint; while more units are already waiting it runs them in the same outer
transaction, each under its own savepoint, and only then COMMITs once for all of them. So the
slow parts — waiting for another process's lock in BEGIN, and the fsync of COMMIT — always run
on this thread, never on an event loop. A unit whose body raised is rolled back to its
savepoint alone. Every unit's `done` future is resolved only after COMMIT returned, so nothing
is reported finished before it is durable.

Durability. `PRAGMA synchronous` set *inside* an open transaction does not reliably apply to
its COMMIT (measured with strace: 2 syncs for 5 such commits), so the level is chosen before
BEGIN: FULL when the first unit, or any unit already waiting, asked for `durable=True`, NORMAL
otherwise. A durable unit never joins a NORMAL group: the group commits first and the durable
unit starts a FULL one. A FULL commit fsyncs the WAL file, which holds every frame the earlier
NORMAL commits wrote (or they were checkpointed, which syncs too), so it makes them durable as
well. Switching the pragma between transactions costs microseconds (see the benchmark).

Errors that make SQLite roll back the whole transaction (a full disk, an I/O error) fail every
unit of the group with that error: their bodies already ran and cannot be replayed, and none of
them was written.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

from atomic_agent.persistence.persistence_errors import (
    PersistenceError,
    StoreClosedError,
    TransactionAbortedError,
)
from atomic_agent.persistence.sqlite_open import classify_sqlite_error
from atomic_agent.persistence.sqlite_write_unit import COMMIT, ROLLBACK, WriterStats, WriteUnit, resolve
from atomic_agent.persistence.store_records import ChangeSet
_RELEASED, _ROLLED_BACK, _GROUP_LOST = "released", "rolled_back", "group_lost"


class SqliteWriter:
    def __init__(self, connect: Callable[[], sqlite3.Connection], path: Path, busy_timeout_s: float,
                 on_commit: Callable[[ChangeSet], None], max_group: int = 256) -> None:
        self._connect = connect
        self._path = path
        self._busy_timeout_s = busy_timeout_s
        self._on_commit = on_commit
        self._max_group = max_group
        self._pending: deque[WriteUnit] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._abandoned = False
        self._active: WriteUnit | None = None
        self._ready = threading.Event()
        self._startup_error: BaseException | None = None
        self._full: bool | None = None
        self.conn: sqlite3.Connection | None = None
        self.conn_lock = threading.Lock()  # the active unit's statements vs the writer's own
        self.stats = WriterStats()
        self._thread = threading.Thread(target=self._run, name=f"store-writer:{path.name}", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait()
        if self._startup_error is not None:
            raise self._startup_error

    def submit(self, unit: WriteUnit) -> None:
        with self._cond:
            if self._closing:
                raise StoreClosedError(f"the store on {self._path} was closed; open it again")
            self._pending.append(unit)
            self._cond.notify()

    def close(self) -> None:
        """Let queued and open units finish, commit them, then close the connection."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()

    def abandon(self) -> None:
        """Die like a crashed process: roll back whatever is uncommitted, fail every waiter."""
        with self._cond:
            self._closing = True
            self._abandoned = True
            pending, self._pending = list(self._pending), deque()
            active = self._active
            self._cond.notify()
        for unit in pending:
            error = StoreClosedError("the store was abandoned before this transaction started")
            resolve(unit.loop, unit.started, error=error)
            resolve(unit.loop, unit.done, error=error)
        if active is not None:
            active.ops.put(ROLLBACK)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()

    # -- writer thread ---------------------------------------------------------------------

    def _run(self) -> None:
        try:
            conn = self._connect()
        except BaseException as exc:  # reported to start()
            self._startup_error = exc
            self._ready.set()
            return
        self.conn = conn
        self._ready.set()
        try:
            while True:
                with self._cond:
                    while not self._pending and not self._closing:
                        self._cond.wait()
                    if not self._pending:
                        break
                    first = self._pending.popleft()
                    full = first.durable or any(u.durable for u in self._pending)
                self._group(conn, first, full)
        finally:
            with self.conn_lock:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                conn.close()

    def _error(self, exc: sqlite3.Error) -> PersistenceError:
        return classify_sqlite_error(exc, self._path, self._busy_timeout_s)

    def _set_level(self, conn: sqlite3.Connection, full: bool) -> None:
        if self._full is not full:
            conn.execute("PRAGMA synchronous = FULL" if full else "PRAGMA synchronous = NORMAL")
            if self._full is not None:
                self.stats.level_switches += 1
            self._full = full

    def _next(self, full: bool, count: int) -> WriteUnit | None:
        if count >= self._max_group:
            return None
        with self._cond:
            if not self._pending or self._abandoned:
                return None
            if self._pending[0].durable and not full:
                return None  # a durable unit needs a FULL commit: close this group first
            return self._pending.popleft()

    def _group(self, conn: sqlite3.Connection, first: WriteUnit, full: bool) -> None:
        try:
            with self.conn_lock:
                self._set_level(conn, full)
                conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            error = self._error(exc)
            resolve(first.loop, first.started, error=error)
            resolve(first.loop, first.done, error=error)
            return
        members: list[WriteUnit] = []
        count = 0
        unit: WriteUnit | None = first
        while unit is not None:
            count += 1
            outcome = self._unit(conn, unit)
            if outcome == _RELEASED:
                members.append(unit)
            elif outcome == _GROUP_LOST:
                self._fail_group(conn, members, unit)
                return
            unit = self._next(full, count)
        if self._abandoned:
            self._fail_group(conn, members, None)
            return
        if not members:  # every unit rolled itself back: nothing to commit (or fsync)
            with self.conn_lock:
                conn.execute("ROLLBACK")
            return
        try:
            with self.conn_lock:
                conn.execute("COMMIT")
        except sqlite3.Error as exc:
            error = self._error(exc)
            with self.conn_lock:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            for member in members:
                resolve(member.loop, member.done, error=error)
            return
        self.stats.commits += 1
        self.stats.full_commits += int(full)
        self.stats.normal_commits += int(not full)
        self.stats.units_committed += len(members)
        self.stats.largest_group = max(self.stats.largest_group, len(members))
        streams: set[str] = set()
        keys: set[str] = set()
        for member in members:
            streams |= member.streams
            keys |= member.keys
        try:  # before the callers resume, so a watcher never misses a change its writer saw land
            self._on_commit(ChangeSet(frozenset(streams), frozenset(keys)))
        except Exception:  # a notifier must never break the writer; the commit has happened
            pass
        for member in members:
            resolve(member.loop, member.done)

    def _fail_group(self, conn: sqlite3.Connection, members: list[WriteUnit], culprit: WriteUnit | None) -> None:
        with self.conn_lock:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        cause = culprit.lost if culprit is not None and culprit.lost is not None else None
        for member in members:
            if cause is not None:
                error: PersistenceError = type(cause)(
                    f"{cause} (this transaction was committed in the same group and was rolled back with it)")
            elif self._abandoned:
                error = StoreClosedError("the store was abandoned before this transaction committed")
            else:
                error = TransactionAbortedError("the group this transaction was committed in was rolled back")
            resolve(member.loop, member.done, error=error)

    def _unit(self, conn: sqlite3.Connection, unit: WriteUnit) -> str:
        with self._cond:
            self._active = unit
        try:
            return self._run_unit(conn, unit)
        except sqlite3.Error as exc:  # SAVEPOINT / RELEASE / ROLLBACK TO itself failed
            unit.lost = self._error(exc)
            resolve(unit.loop, unit.started, error=unit.lost)
            resolve(unit.loop, unit.done, error=unit.lost)
            return _GROUP_LOST
        finally:
            with self._cond:
                self._active = None

    def _run_unit(self, conn: sqlite3.Connection, unit: WriteUnit) -> str:
        with self.conn_lock:
            conn.execute("SAVEPOINT unit")
        resolve(unit.loop, unit.started)
        item = unit.ops.get()  # the caller's statements run meanwhile, on its own thread
        if unit.lost is not None:
            resolve(unit.loop, unit.done, error=unit.lost if item == COMMIT else None)
            return _GROUP_LOST
        with self.conn_lock:
            if item == COMMIT and not self._abandoned:
                conn.execute("RELEASE unit")
                return _RELEASED
            conn.execute("ROLLBACK TO unit")
            conn.execute("RELEASE unit")
        if self._abandoned:
            resolve(unit.loop, unit.done, error=StoreClosedError("the store was abandoned mid-transaction"))
        else:
            resolve(unit.loop, unit.done)
        return _ROLLED_BACK

    def execute(self, unit: WriteUnit, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        """Run one statement function of the active `unit` on the caller's thread."""
        if unit.lost is not None:
            raise unit.lost
        with self.conn_lock:
            if self._abandoned or self.conn is None:
                raise StoreClosedError(f"the store on {self._path} was abandoned mid-transaction")
            try:
                return fn(self.conn)
            except sqlite3.Error as exc:
                error = self._error(exc)
                if not self.conn.in_transaction:  # SQLite rolled the whole group back
                    unit.lost = error
                raise error from exc
