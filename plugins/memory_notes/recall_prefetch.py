"""What `### recalled` and `### memory-index` show for a session's current turn.

Computed once per turn (`prefetch`, from the phase's before_turn) and held here, in memory
only: these are the session's ephemeral fields, recomputed against every new user
message and never written to sessions.sqlite. A read for a message that was not
prefetched (a prompt preview) computes it on the spot.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import attrs

MAX_SESSIONS = 256  # bounded: the least recently used session's snapshot is dropped
RECALL_METRIC = "agent.memory.notes.recall"
RECALL_HITS_METRIC = "agent.memory.notes.recall.hits"
RECALL_LATENCY_METRIC = "agent.memory.notes.recall.latency_ms"


@attrs.frozen
class RecallSnapshot:
    user_text: str
    working_dir: str | None
    recalled: tuple[Any, ...]
    index: tuple[Any, ...]


class RecallPrefetch:
    def __init__(self, store: Callable[[], Any], cfg: Any, metrics: Callable[[], Any]) -> None:
        self._store = store
        self._cfg = cfg
        self._metrics = metrics
        self._snapshots: OrderedDict[str, RecallSnapshot] = OrderedDict()

    def _compute(self, user_text: str, working_dir: str | None) -> RecallSnapshot:
        store = self._store()
        inject, index = self._cfg.recall_injection, self._cfg.index
        recalled: tuple[Any, ...] = ()
        if inject.enabled and user_text.strip():
            started = time.perf_counter()
            recalled = tuple(h.note for h in store.recall(user_text, inject.k, working_dir=working_dir))
            metrics = self._metrics()
            metrics.observe(RECALL_LATENCY_METRIC, (time.perf_counter() - started) * 1000, source="section")
            metrics.inc(RECALL_METRIC, source="section", outcome="hit" if recalled else "miss")
            if recalled:
                metrics.inc(RECALL_HITS_METRIC, len(recalled), source="section")
        pointers: tuple[Any, ...] = ()
        if index.enabled:
            pointers = tuple(store.recent(index.limit, working_dir=working_dir, exclude_ids=[n.id for n in recalled]))
        return RecallSnapshot(user_text, working_dir, recalled, pointers)

    def prefetch(self, session_id: str, user_text: str, working_dir: str | None) -> RecallSnapshot:
        snapshot = self._compute(user_text, working_dir)
        self._snapshots[session_id] = snapshot
        self._snapshots.move_to_end(session_id)
        while len(self._snapshots) > MAX_SESSIONS:
            self._snapshots.popitem(last=False)
        return snapshot

    def snapshot(self, session_id: str, user_text: str) -> RecallSnapshot:
        found = self._snapshots.get(session_id)
        if found is not None and found.user_text == user_text:
            return found
        return self.prefetch(session_id, user_text, found.working_dir if found is not None else None)

    def held_sessions(self) -> list[str]:
        return list(self._snapshots)
