"""The `memory` service: memory.sqlite of one runtime and the stores over it, for the
memory phases (profile, notes, reflection) and anything else that remembers.

The file opens on first use, not when the service is built, so a locked, corrupt or newer
file surfaces where it is used, as a `StoreError` a tool turns into an error result; the
runtime closes it after `runtime_stopping`. Metrics go to the `metrics` service when a
plugin provides one, and are dropped otherwise.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.metrics.metrics_contract import METRICS_SERVICE

from .lesson_store import DEFAULT_MAX_ENTRIES as DEFAULT_MAX_LESSONS
from .lesson_store import LessonStore
from .link_store import LINK_KINDS, LinkStore
from .memory_database import DEFAULT_BUSY_TIMEOUT_S, MemoryDatabase, memory_db_path
from .memory_errors import MemoryStoreError, MemoryValidationError
from .note_leases import DEFAULT_LEASE_MS, acquire_lease, release_lease
from .note_store import NoteStore
from .note_validation import DEFAULT_MAX_CONTENT_CHARS
from .outcome_votes import OutcomeVoter
from .procedure_store import DEFAULT_MIN_RUNS, ProcedureStore
from .profile_store import ProfileStore
from .profile_validation import is_valid_profile_key
from .query_feedback import QueryFeedback
from .recall_fusion import FusionWeights
from .recall_votes import MAX_VOTE, RecallVoteStore
from .turn_trouble import DEFAULT_DETOUR_CALLS, TurnTrouble, assess_turn, corrects

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

BUSY_TIMEOUT_ENV = "ATOMIC_AGENT_MEMORY_BUSY_TIMEOUT_MS"
LISTENER_FAILED_METRIC = "agent.memory.notes.stored_listener_failed"
UNAVAILABLE_METRIC = "agent.memory.database.unavailable"
SHOWN_TURNS_KEPT = 1024  # turns whose shown lessons are remembered (a server may run many sessions)


class DroppedMetrics:
    """What memory code records into when no plugin provides `metrics`."""

    def inc(self, name: str, value: float = 1, **tags: Any) -> None:
        return None

    def observe(self, name: str, value: float, **tags: Any) -> None:
        return None


class MemoryService:
    # the errors callers catch, reachable without importing this plugin
    StoreError = MemoryStoreError
    ValidationError = MemoryValidationError
    FusionWeights = FusionWeights  # the blend hybrid recall passes to NoteStore.recall
    QueryFeedback = QueryFeedback  # pseudo-relevance feedback NoteStore.recall can fold in
    LINK_KINDS = LINK_KINDS

    def __init__(self, path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S, metrics: Any = None) -> None:
        self.path = path
        self.busy_timeout_s = busy_timeout_s
        self.metrics = metrics if metrics is not None else DroppedMetrics()
        self._database: MemoryDatabase | None = None
        # hybrid recall (the memory_embeddings plugin): None keeps recall plain BM25
        self.vector_recall: Any = None
        self._stored_listeners: list[Callable[[Sequence[int]], None]] = []
        # (session, turn) -> the lesson ids that turn's prompts showed: the model's vote allowlist
        self._shown_lessons: OrderedDict[tuple[str, int], tuple[int, ...]] = OrderedDict()

    def show_lessons(self, session_id: str, turn_index: int, ids: Iterable[int]) -> None:
        """Record that a turn's prompt showed these lessons (added to what it showed before)."""
        key = (session_id, int(turn_index))
        self._shown_lessons[key] = tuple(dict.fromkeys([*self._shown_lessons.get(key, ()), *map(int, ids)]))
        self._shown_lessons.move_to_end(key)
        while len(self._shown_lessons) > SHOWN_TURNS_KEPT:
            self._shown_lessons.popitem(last=False)

    def lessons_shown(self, session_id: str, turn_index: int) -> tuple[int, ...]:
        """The lesson ids a turn's prompts showed (in this process), in the order first shown."""
        return self._shown_lessons.get((session_id, int(turn_index)), ())

    def attach_vector_recall(self, vector_recall: Any) -> None:
        """Make recall hybrid: `vector_recall.nearest(query, working_dir)` (async) gives
        {note id: cosine} or None, and its `fusion` / `candidates` shape the blend."""
        self.vector_recall = vector_recall

    def on_notes_stored(self, listener: Callable[[Sequence[int]], None]) -> None:
        """Call `listener(ids)` after every committed note insert (it must not block)."""
        self._stored_listeners.append(listener)

    def _notes_stored(self, ids: Sequence[int]) -> None:
        for listener in self._stored_listeners:
            try:
                listener(ids)
            except Exception as exc:  # a listener never fails the write that already committed
                self.metrics.inc(LISTENER_FAILED_METRIC, error=type(exc).__name__)

    @property
    def database(self) -> MemoryDatabase:
        """The open database (opened and migrated on first use, reopened after a close)."""
        if self._database is None or self._database.closed:
            try:
                self._database = MemoryDatabase.open(self.path, self.busy_timeout_s)
            except MemoryStoreError as exc:  # corrupt, newer or locked: left untouched, counted, raised
                self.metrics.inc(UNAVAILABLE_METRIC, reason=type(exc).__name__)
                raise
        return self._database

    def profile_store(self) -> ProfileStore:
        return ProfileStore(self.database, self.metrics)

    def note_store(self, max_entries: int = 1000, max_content_chars: int = DEFAULT_MAX_CONTENT_CHARS) -> NoteStore:
        return NoteStore(self.database, max_entries=max_entries, max_content_chars=max_content_chars,
                         metrics=self.metrics, on_stored=self._notes_stored if self._stored_listeners else None)

    def link_store(self) -> LinkStore:
        return LinkStore(self.database)

    def lesson_store(self, max_entries: int = DEFAULT_MAX_LESSONS) -> LessonStore:
        return LessonStore(self.database, max_entries=max_entries)

    def procedure_store(self, min_runs: int = DEFAULT_MIN_RUNS) -> ProcedureStore:
        return ProcedureStore(self.database, min_runs=min_runs)

    def recall_vote_store(self, max_vote: float = MAX_VOTE) -> RecallVoteStore:
        return RecallVoteStore(self.database, max_vote=max_vote)

    def outcome_voter(self, kind: str) -> OutcomeVoter:
        """A phase's turn-outcome votes on the rows it shows (`kind`: note | profile)."""
        return OutcomeVoter(self, kind)

    def evolve_tags(self, note_id: int, add_tags: list[str], lease_ms: int = DEFAULT_LEASE_MS) -> str:
        """Grow a note's tags (never its content): applied | lease_held | no_change | missing."""
        from .note_tag_evolution import evolve_tags

        return evolve_tags(self.database, note_id, add_tags, lease_ms=lease_ms)

    def acquire_lease(self, note_id: int, lease_ms: int = DEFAULT_LEASE_MS) -> bool:
        """The consolidator's single-writer lease on a note (see note_leases)."""
        return acquire_lease(self.database, note_id, lease_ms)

    def release_lease(self, note_id: int) -> None:
        release_lease(self.database, note_id)

    def background_slot(self, provider: Any, session_id: str, caller: str) -> int:
        """The slot a memory sub-call rides (the reserved one, else -1, counted); see background_slot."""
        from .background_slot import background_slot

        return background_slot(provider, session_id, caller, self.metrics)

    @staticmethod
    def is_valid_profile_key(key: str) -> bool:
        return is_valid_profile_key(key)

    def assess_turn(self, entries: Any, session_id: str, turn_index: int, *, correction: str = "",
                    detour_calls: int = DEFAULT_DETOUR_CALLS) -> TurnTrouble | None:
        return assess_turn(entries, session_id, turn_index, correction=correction, detour_calls=detour_calls)

    @staticmethod
    def corrects(text: str) -> bool:
        return corrects(text)

    def close(self) -> None:
        if self._database is not None:
            self._database.close()
            self._database = None


def busy_timeout_s(environ: Any) -> float:
    raw = str((environ or os.environ).get(BUSY_TIMEOUT_ENV, "")).strip()
    if raw.isdigit():
        return max(int(raw), 1) / 1000
    return DEFAULT_BUSY_TIMEOUT_S


def build_memory_service(runtime: RuntimeView) -> MemoryService:
    # None without the metrics plugin, or with a broken one: memory works without it
    metrics = runtime.service(METRICS_SERVICE, None)
    return MemoryService(memory_db_path(runtime.state_dir), busy_timeout_s(getattr(runtime, "environ", None)),
                         metrics)
