"""sessions.sqlite: the SQLite `SessionRepository` (session_database) — sessions and transcripts.

Every statement on those tables is here; the turn ledger and steering queue own theirs.
The fence reads of `turns` live here too: a fenced append checks its turn inside its own
transaction, and loading a session must know which turns still run.
"""

from __future__ import annotations

import builtins  # these classes have a `list` method: their annotations name the builtin as builtins.list
import copy
import sqlite3
import uuid
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.sessions import stored_rows
from atomic_agent.sessions.session_database import RawRow
from atomic_agent.sessions.session_schema import MIGRATIONS
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.store_errors import (
    SessionNotFoundError,
    SessionStoreError,
    explain_write_failures,
    open_failure,
)
from atomic_agent.sessions.transcript_cache import TranscriptCache
from atomic_agent.sessions.transcript_entry import TOOL_RESULT, TURN_FINISHED, TURN_STARTED, TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard, require_running
from atomic_agent.storage.group_commit import GroupSync, sync_is_deferred, wal_fsync
from atomic_agent.storage.sqlite_file import Durability
from atomic_agent.storage.sqlite_migrations import NewerSchemaError
from atomic_agent.storage.sqlite_store import SqliteStore
from atomic_agent.storage.sqlite_transaction import transaction
from atomic_agent.storage.store_clock import now_iso

if TYPE_CHECKING:
    from atomic_agent.sessions.transcript_search import TranscriptHit

__all__ = ["SESSIONS_FILE", "SessionNotFoundError", "SessionStore", "SessionStoreError"]

SESSIONS_FILE = "sessions.sqlite"


class SessionStore(SqliteStore):
    """One SQLite file (WAL, busy timeout); every write commits before returning.

    Opened like every other state file (storage.sqlite_store): a file of a newer build is
    refused before WAL (or anything else) is written to it, then the migrations run; what a
    file that cannot be used means is said by `open_failure` (damage, a lock, a full disk and
    a read-only directory each have their own fix). `write()` is this store's own: it adds
    relaxed commits and the group fsync that makes them durable.

    `fenced(guard)` gives a view over the same connection whose writes all carry a running
    turn's writer guard, so a loop and its steps need not know the guard exists."""

    migrations = MIGRATIONS
    # FULL: what is written here was acknowledged to someone (accepted turns and steers)
    durability = Durability.FULL
    _guard: TurnGuard | None = None

    def __init__(self, state_dir: Path) -> None:
        path = state_dir / SESSIONS_FILE
        self._transcripts = TranscriptCache()
        # relaxed commits (deferred_sync, durable=False) and the shared fsyncs that make them durable
        self.group = GroupSync(wal_fsync(path))
        try:
            super().__init__(path)
        except NewerSchemaError as exc:  # refused before anything was written; it names the newer build
            raise SessionStoreError(str(exc)) from exc
        except OSError as exc:
            raise open_failure(path, exc) from exc

    # what an unusable file means here: see open_failure (the newer-schema refusal is raised as
    # NewerSchemaError, whose message names the build that wrote the file)
    def refuse_locked(self, exc: sqlite3.DatabaseError, *, writing: bool) -> Exception:
        return open_failure(self.path, exc)

    def refuse_unreadable(self, exc: sqlite3.DatabaseError) -> Exception:
        return open_failure(self.path, exc)

    def refuse_unusable(self, exc: sqlite3.DatabaseError) -> Exception:
        return open_failure(self.path, exc)

    def close(self) -> None:
        self.group.close()
        super().close()

    @property
    def guard(self) -> TurnGuard | None:
        return self._guard

    def fenced(self, guard: TurnGuard) -> SessionStore:
        """The same store whose `append`/`save_state` are conditional on `guard`."""
        view = copy.copy(self)
        view._guard = guard
        return view

    @contextmanager
    def write(self, *, durable: bool = True) -> Iterator[sqlite3.Connection]:
        """`with store.write():` one BEGIN IMMEDIATE transaction (joining an outer one), with a
        lock timeout or a full disk raised as a typed error naming the file.

        `durable=False` is for a commit that acknowledges nothing (a turn's reply row, written
        before the finalize): it is committed atomically but not fsynced (synchronous=NORMAL),
        so a power cut may lose it — only together with every later commit (the WAL is replayed
        as a prefix), and the next durable commit makes it durable too. The outermost `write()`
        decides: a joined transaction keeps the durability it was opened with.

        Inside `deferred_sync()` (storage.group_commit) a durable write is committed the same
        relaxed way and its caller awaits `wait_durable()` before acknowledging it: one fsync
        then covers every turn that committed meanwhile."""
        conn = self.conn
        outermost = not conn.in_transaction
        relax = outermost and (not durable or sync_is_deferred())
        if relax:
            conn.execute("PRAGMA synchronous=NORMAL")
        try:
            with explain_write_failures(self.path), transaction(conn) as handle:
                yield handle
            if relax:
                self.group.relaxed_commit()
            elif outermost:
                self.group.durable_commit()
        finally:
            if relax:
                conn.execute(f"PRAGMA synchronous={Durability.FULL.value}")

    async def wait_durable(self) -> None:
        """Return once every commit made through this store so far is on disk: one fsync of
        the WAL, off the event loop, shared by every caller waiting meanwhile."""
        await self.group.wait()

    def sync_now(self) -> None:
        """`wait_durable` without an event loop (an fsync on this thread when one is owed)."""
        self.group.wait_blocking()

    # -- sessions ---------------------------------------------------------------------------
    def create(self, working_dir: Path, title: str = "") -> SessionState:
        created = now_iso()
        state = SessionState(id=uuid.uuid4().hex[:12], working_dir=working_dir, created_at=created, title=title,
                             updated_at=created)
        with self.write():
            self.conn.execute(
                "insert into sessions (id, created_at, updated_at, working_dir, status, title, loaded_tools, "
                "known_facts) values (?, ?, ?, ?, ?, ?, '[]', '[]')",
                [state.id, created, created, str(working_dir), state.status, title])
        return state

    def exists(self, session_id: str) -> bool:
        return self.conn.execute("select 1 from sessions where id = ?", [session_id]).fetchone() is not None

    def recent_working_dirs(self, limit: int) -> list[str]:
        """The working dirs of the `limit` sessions updated last, newest first (a column-only
        read: no session payload or transcript is loaded)."""
        return [row[0] for row in self.conn.execute(
            "select working_dir from sessions order by updated_at desc limit ?", [limit])]

    def load(self, session_id: str) -> SessionState:
        with self._reading() as owned:  # the session row and its transcript from one snapshot
            cursor = self.conn.execute("select * from sessions where id = ?", [session_id])
            row = cursor.fetchone()
            if row is None:
                raise SessionNotFoundError(session_id)
            data = dict(zip([d[0] for d in cursor.description], row, strict=True))
            state = stored_rows.session_state_of(data)
            state.entries, unanswered = self._transcripts.read(self, session_id, keep=owned)
        if unanswered:  # rare: every load used to scan the whole transcript to learn this
            from atomic_agent.sessions.repair_unanswered_calls import repair_on_load

            repair_on_load(self, state)  # a call stranded under later rows gets its answer beside it (issue 5)
        return state

    def save_state(self, state: SessionState) -> None:
        """Persist the mutable session fields (status, title, loaded tools, facts)."""
        with self.write() as conn:
            if self._guard is not None:
                self.check_fence(conn, self._guard)
            self._write_state(state)

    def _write_state(self, state: SessionState) -> None:
        *fields, session_id = stored_rows.session_fields_of(state)
        self.conn.execute(
            "update sessions set status = ?, title = ?, loaded_tools = ?, known_facts = ?, updated_at = ? where id = ?",
            [*fields, now_iso(), session_id])

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "select s.id, s.created_at, s.updated_at, s.status, s.title, s.working_dir, "
            "(select count(*) from transcript t where t.session_id = s.id and t.kind = 'turn_started') as turns "
            "from sessions s order by s.updated_at desc limit ?", [limit])
        cols = [d[0] for d in rows.description]
        return [dict(zip(cols, r, strict=True)) for r in rows.fetchall()]

    def session_ids(self) -> builtins.list[str]:
        return [row[0] for row in self.conn.execute("select id from sessions order by created_at, id").fetchall()]

    def search(self, query: str, *, channels: Collection[str] | None = None, exclude_session: str | None = None,
               limit: int = 10) -> builtins.list[TranscriptHit]:
        from atomic_agent.sessions.transcript_search import search_transcripts

        with self._reading():
            return search_transcripts(self.conn, query, channels=channels, exclude_session=exclude_session,
                                      limit=limit)

    def first_origin(self, session_id: str) -> str | None:
        from atomic_agent.sessions.transcript_search import first_origin

        with self._reading():
            return first_origin(self.conn, session_id)

    def channel(self, session_id: str) -> str:
        from atomic_agent.sessions.transcript_search import channel_of

        return channel_of(self.first_origin(session_id))

    def delete(self, session_id: str) -> None:
        if not self.exists(session_id):
            raise SessionNotFoundError(session_id)
        self._transcripts.forget(session_id)
        with transaction(self.conn):
            self.conn.execute("delete from transcript where session_id = ?", [session_id])
            self.conn.execute("delete from steer_queue where session_id = ?", [session_id])
            self.conn.execute("delete from turns where session_id = ?", [session_id])  # turn_audit keeps the history
            self.conn.execute("delete from idempotency_keys where session_id = ?", [session_id])
            self.conn.execute("delete from sessions where id = ?", [session_id])

    # -- transcript -------------------------------------------------------------------------
    def entries(self, session_id: str) -> builtins.list[TranscriptEntry]:
        """The session's rows in seq order (a new list), read incrementally (transcript_cache)."""
        with self._reading() as owned:
            return self._transcripts.read(self, session_id, keep=owned)[0]

    def catch_up(self, state: SessionState) -> None:
        with self._reading() as owned:
            self._transcripts.catch_up(self, state, keep=owned)

    def entries_read_whole(self, session_id: str) -> builtins.list[TranscriptEntry]:
        """Every row read from the file, bypassing the cache (what the cache must always equal)."""
        return self.rows_after(session_id, -1)

    @contextmanager
    def _reading(self) -> Iterator[bool]:
        """One read snapshot for the statements inside; yields True when it is its own (False:
        it joined an open transaction, whose reads may yet be rolled back)."""
        conn = self.conn
        if conn.in_transaction:
            yield False
            return
        conn.execute("BEGIN")
        try:
            yield True
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")  # a read-only transaction: nothing to keep or lose

    # what the transcript cache reads (inside `_reading`)
    def stored_rewrites(self, session_id: str) -> int | None:
        found = self.conn.execute("select rewrites from sessions where id = ?", [session_id]).fetchone()
        return None if found is None else int(found[0])

    def rows_after(self, session_id: str, after_seq: int) -> builtins.list[TranscriptEntry]:
        rows = self.conn.execute("select * from transcript where session_id = ? and seq > ? order by seq",
                                 [session_id, after_seq])
        cols = [d[0] for d in rows.description]
        return [stored_rows.entry_of(dict(zip(cols, row, strict=True))) for row in rows.fetchall()]

    def append(self, state: SessionState, entries: builtins.list[TranscriptEntry], *, save_state: bool = False,
               guard: TurnGuard | None = None, durable: bool = True) -> builtins.list[TranscriptEntry]:
        """Append rows in one transaction (with the mutable session fields when `save_state`);
        returns them with seq and timestamp filled in.

        With a guard (given here or by `fenced`) the rows land only while that turn is still
        running at that generation, checked inside the transaction; otherwise StaleWriterError
        and nothing is written. `durable=False`: see `write`."""
        guard = guard or self._guard
        with self.write(durable=durable) as conn:
            if guard is not None:
                self.check_fence(conn, guard)
            stored = self.conn.execute("select max(seq) from transcript where session_id = ?", [state.id]).fetchone()[0]
            stamped = stored_rows.stamp_appended(state, entries, stored)
            self.conn.executemany(
                "insert into transcript (session_id, seq, turn_index, kind, text, tool, args, status, reason, "
                "reasoning, details, step, batch_index, created_at) values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [stored_rows.entry_values(state.id, e, e.seq, e.created_at) for e in stamped])
            if save_state:
                self._write_state(state)
            else:
                self.conn.execute("update sessions set updated_at = ? where id = ?", [now_iso(), state.id])
        state.entries.extend(stamped)
        return stamped

    def answered_batch_indexes(self, handle: sqlite3.Connection, session_id: str, turn_index: int,
                               step: int) -> set[int]:
        return {row[0] for row in handle.execute(
            "select batch_index from transcript where session_id = ? and kind = ? and turn_index = ? and step = ?",
            [session_id, TOOL_RESULT, turn_index, step])}

    def last_answerable_kind(self, session_id: str, closing_statuses: Sequence[str]) -> str | None:
        marks = ", ".join("?" * len(closing_statuses))
        row = self.conn.execute(
            "select kind from transcript where session_id = ? and kind != ? and not (kind = ? and "
            f"coalesce(status, '') not in ({marks})) order by seq desc limit 1",
            [session_id, TURN_STARTED, TURN_FINISHED, *closing_statuses]).fetchone()
        return None if row is None else str(row[0])

    # -- transcript rewrites (inside the caller's transaction) ------------------------------
    def raw_rows(self, handle: sqlite3.Connection, session_id: str, after_seq: int) -> builtins.list[RawRow]:
        cursor = handle.execute("select * from transcript where session_id = ? and seq > ? order by seq",
                                [session_id, after_seq])
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def delete_rows(self, handle: sqlite3.Connection, session_id: str, *, after_seq: int | None = None,
                    upto_seq: int | None = None) -> int:
        if after_seq is not None:
            return handle.execute("delete from transcript where session_id = ? and seq > ?",
                                  [session_id, after_seq]).rowcount
        return handle.execute("delete from transcript where session_id = ? and seq <= ?",
                              [session_id, upto_seq]).rowcount

    def insert_raw_row(self, handle: sqlite3.Connection, row: RawRow, seq: int) -> None:
        columns = list(row)
        values = [seq if c == "seq" else row[c] for c in columns]
        handle.execute(f"insert into transcript ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})",
                       values)

    def insert_entry(self, handle: sqlite3.Connection, session_id: str, entry: TranscriptEntry, seq: int,
                     created_at: str) -> None:
        handle.execute(
            f"insert into transcript ({', '.join(stored_rows.ENTRY_COLUMNS)}) "
            f"values ({', '.join('?' for _ in stored_rows.ENTRY_COLUMNS)})",
            stored_rows.entry_values(session_id, entry, seq, entry.created_at or created_at))

    def touch(self, handle: sqlite3.Connection, session_id: str, now: str) -> None:
        handle.execute("update sessions set updated_at = ? where id = ?", [now, session_id])

    # -- the writer fence (reads of the ledger's turns) -------------------------------------
    def check_fence(self, handle: sqlite3.Connection, guard: TurnGuard) -> None:
        row = handle.execute("select state, generation from turns where turn_id = ?", [guard.turn_id]).fetchone()
        require_running(guard, None if row is None else (row[0], row[1]))

    def running_turn_indexes(self, session_id: str) -> set[int]:
        try:
            rows = self.conn.execute("select turn_index from turns where session_id = ? and state = 'running' "
                                        "and turn_index is not null", [session_id]).fetchall()
        except sqlite3.OperationalError:  # a database from before the ledger: nothing is known to run
            return set()
        return {row[0] for row in rows}
