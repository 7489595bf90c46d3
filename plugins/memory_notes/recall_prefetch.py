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

from .recall_extensions import RecallExtensions, merge_ranked
from .speaker_rerank import speaker_rerank

MAX_SESSIONS = 256
RERANK_POOL = 4  # bounded: the least recently used session's snapshot is dropped
RECALL_METRIC = "agent.memory.notes.recall"
RECALL_HITS_METRIC = "agent.memory.notes.recall.hits"
RECALL_LATENCY_METRIC = "agent.memory.notes.recall.latency_ms"


@attrs.frozen
class RecallSnapshot:
    user_text: str
    working_dir: str | None
    recalled: tuple[Any, ...]
    index: tuple[Any, ...]
    extra_query: str | None = None


def _in_scope(note: Any, working_dir: str | None) -> bool:
    """The same rule recall's SQL applies: global notes, or this working dir's."""
    return note.scope == "global" or working_dir is None or note.working_dir == str(working_dir)


class RecallPrefetch:
    def __init__(self, store: Callable[[], Any], cfg: Any, metrics: Callable[[], Any],
                 extensions: RecallExtensions | None = None) -> None:
        self._store = store
        self._cfg = cfg
        self._metrics = metrics
        self._extensions = extensions or RecallExtensions(None)
        self._snapshots: OrderedDict[str, RecallSnapshot] = OrderedDict()

    def _compute(self, session_id: str, user_text: str, working_dir: str | None) -> RecallSnapshot:
        store = self._store()
        inject, index = self._cfg.recall_injection, self._cfg.index
        recalled: tuple[Any, ...] = ()
        extra = self._extensions.extra_query(session_id, user_text)
        if inject.enabled and user_text.strip():
            started = time.perf_counter()
            pool = inject.k * RERANK_POOL  # rerank a wider pool, then keep k (the same k hits when nothing moves)
            hits = store.recall(user_text, pool, working_dir=working_dir)
            if extra:
                hits = merge_ranked(hits, store.recall(extra, pool, working_dir=working_dir), pool)
            hits = speaker_rerank(hits, user_text)[: inject.k]
            recalled = tuple(h.note for h in hits)
            linked = self._extensions.expand(session_id, user_text, [n.id for n in recalled])
            if linked:
                shown = {n.id for n in recalled}
                recalled += tuple(n for n in (store.get(i) for i in linked if i not in shown)
                                  if n is not None and _in_scope(n, working_dir))
            metrics = self._metrics()
            metrics.observe(RECALL_LATENCY_METRIC, (time.perf_counter() - started) * 1000, source="section")
            metrics.inc(RECALL_METRIC, source="section", outcome="hit" if recalled else "miss")
            if recalled:
                metrics.inc(RECALL_HITS_METRIC, len(recalled), source="section")
        pointers: tuple[Any, ...] = ()
        if index.enabled:
            pointers = tuple(store.recent(index.limit, working_dir=working_dir, exclude_ids=[n.id for n in recalled]))
        return RecallSnapshot(user_text, working_dir, recalled, pointers, extra)

    def prefetch(self, session_id: str, user_text: str, working_dir: str | None) -> RecallSnapshot:
        snapshot = self._compute(session_id, user_text, working_dir)
        self._snapshots[session_id] = snapshot
        self._snapshots.move_to_end(session_id)
        while len(self._snapshots) > MAX_SESSIONS:
            self._snapshots.popitem(last=False)
        return snapshot

    def snapshot(self, session_id: str, user_text: str) -> RecallSnapshot:
        found = self._snapshots.get(session_id)
        if (found is not None and found.user_text == user_text
                and found.extra_query == self._extensions.extra_query(session_id, user_text)):
            return found  # (a rewrite that arrived after the prefetch recomputes it)
        return self.prefetch(session_id, user_text, found.working_dir if found is not None else None)

    def held_sessions(self) -> list[str]:
        return list(self._snapshots)
