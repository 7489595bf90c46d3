"""The contract of the durable session state, so a second backend (PostgreSQL) can follow
without touching the code that uses it. SQLite (`SessionStore`) is today's implementation;
the turn ledger and steering queue protocols live in `turns/turn_repository.py`.

**Unit of work.** `write()` opens one transaction, or joins the one already open on the same
store object, and yields an opaque handle. Leaving the outermost block normally commits;
any exception (BaseException included: a cancellation, a simulated crash) rolls back all of
it, so a failed operation leaves nothing behind. While the block is open, every read and
write made through that store object — and through repositories built on it — belongs to
the transaction and sees its writes; other store objects (other processes) see them only
once it commits. Methods that take a `WriteHandle` are steps of a larger atomic operation:
they never open or commit a transaction of their own and must be called inside `write()`.
Every other method that writes opens its own transaction (joining an outer one).

**Errors.** A lock held by another writer past the backend's timeout raises
SessionStoreLockedError, a full disk SessionStoreFullError (both: nothing of the
transaction was written). A write fenced by a stale `TurnGuard` raises StaleWriterError.
An unknown session raises SessionNotFoundError where the method says so.
"""

from __future__ import annotations

import builtins  # these classes have a `list` method: their annotations name the builtin as builtins.list
from collections.abc import Collection, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.sessions.writer_guard import TurnGuard

if TYPE_CHECKING:
    from atomic_agent.sessions.transcript_search import TranscriptHit

WriteHandle = Any  # the backend's transaction handle, as `write()` yields it; opaque to callers
RawRow = dict[str, Any]  # every stored column of one transcript row, including any a later migration added


@runtime_checkable
class UnitOfWork(Protocol):
    """One transaction boundary over the session state (see the module docstring)."""

    def write(self, *, durable: bool = True) -> AbstractContextManager[WriteHandle]:
        """Open a transaction (or join this object's open one) and yield its handle; commit on
        leaving the outermost block, roll everything back on any exception. With
        `durable=False` the commit acknowledges nothing: a power cut may lose it, but only
        with every later commit, and the next durable commit makes it durable as well (the
        outermost block decides)."""
        ...

    async def wait_durable(self) -> None:
        """Return once every commit made through this object so far is on disk. A write made
        inside `storage.group_commit.deferred_sync()` (or with `durable=False`) is committed
        without waiting for the disk; its caller awaits this before acknowledging it, and
        concurrent callers share one sync."""
        ...

    def sync_now(self) -> None:
        """`wait_durable` for callers without an event loop."""
        ...

    def close(self) -> None:
        """Release the connection; the object is unusable afterwards."""
        ...


@runtime_checkable
class WriterFence(Protocol):
    """The ledger facts a transcript writer is fenced by (read-only views of the turns)."""

    def check_fence(self, handle: WriteHandle, guard: TurnGuard) -> None:
        """Inside the caller's transaction: raise StaleWriterError unless `guard`'s turn is
        running at exactly `guard.generation` (checked under the write lock, so no finalizer
        or recovery can move the turn between the check and the caller's write)."""
        ...

    def running_turn_indexes(self, session_id: str) -> set[int]:
        """Transcript turn indexes of the session's turns the ledger holds as running (in any
        process); empty for a database from before the ledger existed."""
        ...


@runtime_checkable
class TranscriptRewriter(Protocol):
    """Raw row operations for the two transcript rewrites (settling a call, compaction).

    The transcript refuses in-place updates, so a rewrite is delete + insert, all inside the
    caller's transaction; a moved row keeps every column, even ones this code does not know."""

    def raw_rows(self, handle: WriteHandle, session_id: str, after_seq: int) -> list[RawRow]:
        """Every column of the session's rows with seq > `after_seq`, in seq order."""
        ...

    def delete_rows(self, handle: WriteHandle, session_id: str, *, after_seq: int | None = None,
                    upto_seq: int | None = None) -> int:
        """Delete the rows with seq > `after_seq` (or, without it, seq <= `upto_seq`);
        returns how many were deleted."""
        ...

    def insert_raw_row(self, handle: WriteHandle, row: RawRow, seq: int) -> None:
        """Write back a row read by `raw_rows`, at `seq`, every other column unchanged."""
        ...

    def insert_entry(self, handle: WriteHandle, session_id: str, entry: TranscriptEntry, seq: int,
                     created_at: str) -> None:
        """Write `entry` at `seq` exactly as `append` would encode it (`created_at` unless the
        entry carries its own)."""
        ...

    def touch(self, handle: WriteHandle, session_id: str, now: str) -> None:
        """Set the session's `updated_at` (a rewrite counts as use)."""
        ...


@runtime_checkable
class SessionRepository(UnitOfWork, WriterFence, TranscriptRewriter, Protocol):
    """Sessions and their append-only transcripts.

    Transcript rows get seq 0, 1, 2, ... per session, decided from what is stored (not from
    what a caller holds in memory), so two writers never collide; an appended row is never
    changed afterwards — only the two rewrites above replace rows, each in one transaction."""

    path: Path  # where the state lives (named in error messages)

    @property
    def guard(self) -> TurnGuard | None:
        """The writer guard every write of this view carries (see `fenced`), or None."""
        ...

    def fenced(self, guard: TurnGuard) -> SessionRepository:
        """A view on the same store (same transactions) whose `append`, `save_state` and
        settling writes are all conditional on `guard` (StaleWriterError, nothing written)."""
        ...

    def create(self, working_dir: Path, title: str = "") -> SessionState:
        """Commit a new empty session with a fresh unique id; returns it."""
        ...

    def exists(self, session_id: str) -> bool:
        """True when the session is stored (committed, or written by this object's open transaction)."""
        ...

    def load(self, session_id: str) -> SessionState:
        """The session with its whole transcript; SessionNotFoundError if there is none.
        A tool call stranded under later rows is answered first (best effort: a store that
        cannot be written now still loads, and the next load repairs it)."""
        ...

    def entries(self, session_id: str) -> list[TranscriptEntry]:
        """The session's transcript in seq order (no repair; empty for an unknown session)."""
        ...

    def catch_up(self, state: SessionState) -> None:
        """Bring `state.entries` (as `load` left it) up to the stored transcript: append the rows
        committed since its last one, or read them all again when the transcript was rewritten
        meanwhile. Costs the new rows, not the session's length."""
        ...

    def append(self, state: SessionState, entries: list[TranscriptEntry], *, save_state: bool = False,
               guard: TurnGuard | None = None, durable: bool = True) -> list[TranscriptEntry]:
        """Append the rows atomically after the highest seq stored or held in `state.entries`
        (with the mutable session fields when `save_state`) and extend `state.entries`; returns
        the rows with seq and `created_at` filled in. With a guard (here or the view's), StaleWriterError unless its
        turn is still running at that generation — then nothing is written. `durable` as in `write`."""
        ...

    def save_state(self, state: SessionState) -> None:
        """Commit status, title, loaded tools and known facts (fenced like `append`)."""
        ...

    def list(self, limit: int = 50) -> list[dict[str, Any]]:
        """Summaries (id, created_at, updated_at, status, title, working_dir, turns), most
        recently used first."""
        ...

    def session_ids(self) -> builtins.list[str]:
        """Every session id, in creation order."""
        ...

    def search(self, query: str, *, channels: Collection[str] | None = None, exclude_session: str | None = None,
               limit: int = 10) -> builtins.list[TranscriptHit]:
        """What was said (user and reply rows) matching `query`'s words, best first, one hit per
        turn, in sessions of `channels` (None: all), never `exclude_session`; SearchQueryError
        for a query with no words (transcript_search)."""
        ...

    def first_origin(self, session_id: str) -> str | None:
        """Who started the session: the origin of its first turn (cli, tui, sidecar, scheduler,
        http, channel, telegram), None before its first turn."""
        ...

    def channel(self, session_id: str) -> str:
        """The session's channel (local, http, telegram): what its first turn's origin counts as
        for search scopes."""
        ...

    def delete(self, session_id: str) -> None:
        """Remove the session, its transcript, turns and queued steers in one transaction (the
        turn audit is kept); SessionNotFoundError if there is none."""
        ...

    def answered_batch_indexes(self, handle: WriteHandle, session_id: str, turn_index: int, step: int) -> set[int]:
        """Inside the caller's transaction: batch indexes of the step's calls that already have
        a result row (so a result written by someone else first is never written twice)."""
        ...

    def last_answerable_kind(self, session_id: str, closing_statuses: Sequence[str]) -> str | None:
        """The kind of the session's newest row once bookkeeping is skipped: `turn_started`
        rows, and `turn_finished` rows whose status is not in `closing_statuses`. None when
        nothing is left."""
        ...
