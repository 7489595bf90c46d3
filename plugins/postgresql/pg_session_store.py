"""The PostgreSQL `SessionRepository` (session_database): sessions and their append-only
transcripts, plus the fence reads of `turns` a fenced write makes inside its transaction.

Behaviour matches the SQLite store statement for statement; what differs is how the
database is made to agree: a transcript append takes the session row's lock (`FOR UPDATE`)
before it reads the highest seq, so two processes appending to one session queue up instead
of both choosing the same seq; a fence check locks the turn's row, so no finalizer or
recovery moves the turn between the check and the write. What the two do alike (the
transcript cache, how rows map to records, the seqs an append gives, search terms and hits)
comes from the core through the kit.
"""

from __future__ import annotations

import builtins
import copy
import uuid
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from .pg_unit_of_work import PgUnitOfWork


def lock_lane(db: PgUnitOfWork, lane: str) -> None:
    """The lane's advisory lock until the transaction ends (admissions, starts and deletes of
    one lane take turns)."""
    db.execute("select pg_advisory_xact_lock(hashtextextended(%s, 0))", ["lane:" + lane])


class PgSessionStore:
    """One store object ("process" view) on the shared database; `fenced(guard)` gives a view
    sharing its connection and transactions whose writes all carry the guard."""

    _guard: Any = None

    def __init__(self, db: PgUnitOfWork) -> None:
        self.db = db
        self.kit = db.kit
        self.path = Path(db.url.shown)  # what messages name: the database, never its password
        self._transcripts = self.kit.TranscriptCache()

    # -- the unit of work -------------------------------------------------------------------
    def write(self, *, durable: bool = True) -> AbstractContextManager[Any]:
        return self.db.write(durable=durable)

    async def wait_durable(self) -> None:
        """Once every commit made through this store is durable: relaxed commits (deferred_sync,
        durable=False) owe one WAL flush, paid off the event loop (pg_unit_of_work)."""
        if self.db.owes_flush:
            import asyncio

            await asyncio.to_thread(self.db.flush)

    def sync_now(self) -> None:
        """`wait_durable` without an event loop."""
        self.db.flush()

    def close(self) -> None:
        self.db.close()

    @property
    def guard(self) -> Any:
        return self._guard

    def fenced(self, guard: Any) -> PgSessionStore:
        view = copy.copy(self)
        view._guard = guard
        return view

    def _one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.db.execute(sql, params).fetchone()

    def _all(self, sql: str, params: Sequence[Any] = ()) -> list[Any]:
        return list(self.db.execute(sql, params).fetchall())

    # -- sessions ---------------------------------------------------------------------------
    def create(self, working_dir: Path, title: str = "") -> Any:
        created = self.kit.now_iso()
        state = self.kit.SessionState(id=uuid.uuid4().hex[:12], working_dir=working_dir, created_at=created,
                                      title=title, updated_at=created)
        with self.write():
            self.db.execute(
                "insert into sessions (id, created_at, updated_at, working_dir, status, title, loaded_tools, "
                "known_facts) values (%s, %s, %s, %s, %s, %s, '[]', '[]')",
                [state.id, created, created, str(working_dir), state.status, title])
        return state

    def exists(self, session_id: str) -> bool:
        return self._one("select 1 from sessions where id = %s", [session_id]) is not None

    def load(self, session_id: str) -> Any:
        with self.db.reading() as owned:
            cursor = self.db.execute("select * from sessions where id = %s", [session_id])
            row = cursor.fetchone()
            if row is None:
                raise self.kit.SessionNotFoundError(session_id)
            data = dict(zip([d.name for d in cursor.description], row, strict=True))
            state = self.kit.session_state_of(data)
            state.entries, unanswered = self._transcripts.read(self, session_id, keep=owned)
        if unanswered:
            self.kit.repair_on_load(self, state)
        return state

    def save_state(self, state: Any) -> None:
        with self.write() as handle:
            if self._guard is not None:
                self.check_fence(handle, self._guard)
            self._write_state(state)

    def _write_state(self, state: Any) -> None:
        *fields, session_id = self.kit.session_fields_of(state)
        self.db.execute(
            "update sessions set status = %s, title = %s, loaded_tools = %s, known_facts = %s, updated_at = %s "
            "where id = %s", [*fields, self.kit.now_iso(), session_id])

    def list(self, limit: int = 50) -> builtins.list[dict[str, Any]]:
        cursor = self.db.execute(
            "select s.id, s.created_at, s.updated_at, s.status, s.title, s.working_dir, "
            "(select count(*) from transcript t where t.session_id = s.id and t.kind = 'turn_started') as turns "
            "from sessions s order by s.updated_at desc limit %s", [limit])
        cols = [d.name for d in cursor.description]
        return [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()]

    def session_ids(self) -> builtins.list[str]:
        return [row[0] for row in self._all("select id from sessions order by created_at, id")]

    def search(self, query: str, *, channels: Collection[str] | None = None, exclude_session: str | None = None,
               limit: int = 10) -> builtins.list[Any]:
        """Rows said (user, reply) with any of `query`'s words, best first (ts_rank), one per turn."""
        terms = self.kit.search_terms(query)
        with self.db.reading():
            rows = self._all(
                "with q as (select to_tsquery('simple', %s) as q) "
                "select t.session_id, t.seq, t.turn_index, t.kind, t.created_at, "
                "ts_headline('simple', coalesce(t.text, ''), q.q, 'StartSel=[,StopSel=],MaxWords=16,MinWords=4'), "
                "coalesce(s.title, ''), (select origin from turns u where u.session_id = t.session_id "
                "order by u.admitted_order limit 1) "
                "from transcript t join sessions s on s.id = t.session_id, q "
                "where t.kind in ('user', 'assistant_reply') and to_tsvector('simple', coalesce(t.text, '')) @@ q.q "
                "and t.session_id is distinct from %s "
                "order by ts_rank(to_tsvector('simple', coalesce(t.text, '')), q.q) desc, t.created_at desc limit %s",
                [" | ".join("'" + t.replace("'", "''") + "'" for t in terms), exclude_session, max(limit, 1) * 8])
        hits: builtins.list[Any] = self.kit.hits_of(rows, channels=channels, limit=limit)
        return hits

    def first_origin(self, session_id: str) -> str | None:
        row = self._one("select origin from turns where session_id = %s order by admitted_order limit 1",
                        [session_id])
        return str(row[0]) if row else None

    def channel(self, session_id: str) -> str:
        return str(self.kit.channel_of(self.first_origin(session_id)))

    def delete(self, session_id: str) -> None:
        with self.write():
            # the locks in the order every writer takes them (lanes, turn rows, the session row), so a
            # turn finalizing meanwhile is waited for, never deadlocked with
            lanes = {row[0] for row in self._all("select distinct lane from turns where session_id = %s",
                                                 [session_id])}
            for lane in sorted(lanes | {session_id}):
                lock_lane(self.db, lane)
            self._all("select 1 from turns where session_id = %s order by turn_id for update", [session_id])
            if self._one("select 1 from sessions where id = %s for update", [session_id]) is None:
                raise self.kit.SessionNotFoundError(session_id)
            self._transcripts.forget(session_id)
            self.db.execute("delete from transcript where session_id = %s", [session_id])
            self.db.execute("delete from steer_queue where session_id = %s", [session_id])
            self.db.execute("delete from turns where session_id = %s", [session_id])  # the audit keeps the history
            self.db.execute("delete from idempotency_keys where session_id = %s", [session_id])
            self.db.execute("delete from sessions where id = %s", [session_id])

    # -- transcript -------------------------------------------------------------------------
    def entries(self, session_id: str) -> builtins.list[Any]:
        with self.db.reading() as owned:
            entries: builtins.list[Any] = self._transcripts.read(self, session_id, keep=owned)[0]
            return entries

    def catch_up(self, state: Any) -> None:
        with self.db.reading() as owned:
            self._transcripts.catch_up(self, state, keep=owned)

    # what the transcript cache reads (inside `db.reading()`)
    def stored_rewrites(self, session_id: str) -> int | None:
        found = self._one("select rewrites from sessions where id = %s", [session_id])
        return None if found is None else int(found[0])

    def rows_after(self, session_id: str, after_seq: int) -> builtins.list[Any]:
        columns = self.kit.ENTRY_COLUMNS
        cursor = self.db.execute(f"select {', '.join(columns)} from transcript where session_id = %s and "
                                 "seq > %s order by seq", [session_id, after_seq])
        return [self.kit.entry_of(dict(zip(columns, row, strict=True))) for row in cursor.fetchall()]

    def append(self, state: Any, entries: builtins.list[Any], *, save_state: bool = False, guard: Any = None,
               durable: bool = True) -> builtins.list[Any]:
        guard = guard or self._guard
        with self.write(durable=durable) as handle:
            if guard is not None:
                self.check_fence(handle, guard)
            # the session row's lock orders concurrent appenders: the next one reads the seq this one wrote
            if self._one("select 1 from sessions where id = %s for update", [state.id]) is None:
                raise self.kit.SessionNotFoundError(state.id)
            stored = self._one("select max(seq) from transcript where session_id = %s", [state.id])[0]
            stamped = self.kit.stamp_appended(state, entries, stored)
            if stamped:
                columns = self.kit.ENTRY_COLUMNS
                handle.cursor().executemany(
                    f"insert into transcript ({', '.join(columns)}) values ({', '.join('%s' for _ in columns)})",
                    [self.kit.entry_values(state.id, e, e.seq, e.created_at) for e in stamped])
            if save_state:
                self._write_state(state)
            else:
                self.db.execute("update sessions set updated_at = %s where id = %s", [self.kit.now_iso(), state.id])
        state.entries.extend(stamped)
        return stamped

    def answered_batch_indexes(self, handle: Any, session_id: str, turn_index: int, step: int) -> set[int]:
        return {row[0] for row in self._all(
            "select batch_index from transcript where session_id = %s and kind = %s and turn_index = %s and step = %s",
            [session_id, self.kit.TOOL_RESULT, turn_index, step])}

    def last_answerable_kind(self, session_id: str, closing_statuses: Sequence[str]) -> str | None:
        row = self._one(
            "select kind from transcript where session_id = %s and kind != %s and not (kind = %s and "
            "coalesce(status, '') <> all(%s)) order by seq desc limit 1",
            [session_id, self.kit.TURN_STARTED, self.kit.TURN_FINISHED, builtins.list(closing_statuses)])
        return None if row is None else str(row[0])

    # -- transcript rewrites (inside the caller's transaction) ------------------------------
    def raw_rows(self, handle: Any, session_id: str, after_seq: int) -> builtins.list[dict[str, Any]]:
        cursor = self.db.execute("select * from transcript where session_id = %s and seq > %s order by seq",
                                 [session_id, after_seq])
        columns = [d.name for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]

    def delete_rows(self, handle: Any, session_id: str, *, after_seq: int | None = None,
                    upto_seq: int | None = None) -> int:
        if after_seq is not None:
            return int(self.db.execute("delete from transcript where session_id = %s and seq > %s",
                                       [session_id, after_seq]).rowcount)
        return int(self.db.execute("delete from transcript where session_id = %s and seq <= %s",
                                   [session_id, upto_seq]).rowcount)

    def insert_raw_row(self, handle: Any, row: dict[str, Any], seq: int) -> None:
        from psycopg import sql

        columns = builtins.list(row)
        self.db.execute(sql.SQL("insert into transcript ({}) values ({})").format(
            sql.SQL(", ").join(map(sql.Identifier, columns)), sql.SQL(", ").join(sql.Placeholder() * len(columns))),
            [seq if c == "seq" else row[c] for c in columns])

    def insert_entry(self, handle: Any, session_id: str, entry: Any, seq: int, created_at: str) -> None:
        columns = self.kit.ENTRY_COLUMNS
        self.db.execute(f"insert into transcript ({', '.join(columns)}) values ({', '.join('%s' for _ in columns)})",
                        self.kit.entry_values(session_id, entry, seq, entry.created_at or created_at))

    def touch(self, handle: Any, session_id: str, now: str) -> None:
        self.db.execute("update sessions set updated_at = %s where id = %s", [now, session_id])

    # -- the writer fence -------------------------------------------------------------------
    def check_fence(self, handle: Any, guard: Any) -> None:
        # the row lock: the turn cannot move (finalize, interrupt) until this transaction ends, and a
        # finalize that checks then updates never has to upgrade a shared lock (no deadlock)
        row = self._one("select state, generation from turns where turn_id = %s for update", [guard.turn_id])
        self.kit.require_running(guard, None if row is None else (row[0], int(row[1])))

    def running_turn_indexes(self, session_id: str) -> set[int]:
        return {int(row[0]) for row in self._all(
            "select turn_index from turns where session_id = %s and state = 'running' and turn_index is not null",
            [session_id])}

