"""What `### recalled` and `### memory-index` show for a session's current turn.

Computed once per turn (`prefetch`, from the phase's before_turn; `prefetch_hybrid` when
the memory_embeddings plugin offers vectors) and held here, in memory only: these are
the session's ephemeral fields, recomputed against every new user message and never
written to sessions.sqlite. A read for a message that was not prefetched (a prompt
preview) computes it on the spot (full-text only: the vector side needs an awaited
embedding). A rewritten query that arrives after the prefetch recomputes the snapshot
with the vector hits the prefetch already fetched.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import attrs

from .recall_extensions import RecallExtensions, merge_ranked
from .speaker_rerank import speaker_rerank

MAX_SESSIONS = 256  # bounded: the least recently used session's snapshot is dropped
RERANK_POOL = 4  # rerank a pool of k × this, then keep k
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
    nearest: Any = None  # the vector hits of user_text (hybrid prefetch), reused by a recompute
    vectors: Any = None


def _in_scope(note: Any, working_dir: str | None) -> bool:
    """The same rule recall's SQL applies: global notes, or this working dir's."""
    return note.scope == "global" or working_dir is None or note.working_dir == str(working_dir)


class RecallPrefetch:
    def __init__(self, store: Callable[[], Any], cfg: Any, metrics: Callable[[], Any],
                 extensions: RecallExtensions | None = None, query_feedback: Callable[..., Any] | None = None) -> None:
        self._store = store
        self._query_feedback = query_feedback or (lambda **settings: None)  # the memory plugin's QueryFeedback
        self._feedback_settings: tuple[tuple[int, int], Any] | None = None
        self._cfg = cfg
        self._metrics = metrics
        self._extensions = extensions or RecallExtensions(None)
        self._snapshots: OrderedDict[str, RecallSnapshot] = OrderedDict()

    def _compute(self, session_id: str, user_text: str, working_dir: str | None, nearest: Any = None,
                 vectors: Any = None, started: float | None = None) -> RecallSnapshot:
        store = self._store()
        inject, index = self._cfg.recall_injection, self._cfg.index
        recalled: tuple[Any, ...] = ()
        extra = self._extensions.extra_query(session_id, user_text)
        if inject.enabled and user_text.strip():
            started = time.perf_counter() if started is None else started
            hybrid = {} if nearest is None else {"nearest": nearest, "fusion": vectors.fusion,
                                                  "candidates": vectors.candidates}
            pool = inject.k * RERANK_POOL  # the same k hits when the rerank moves nothing
            if inject.feedback_terms:
                hybrid["feedback"] = self._feedback(inject)
            hits = store.recall(user_text, pool, working_dir=working_dir, **hybrid)
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
            path = {} if vectors is None else {"path": "hybrid" if nearest is not None else "bm25"}
            metrics.observe(RECALL_LATENCY_METRIC, (time.perf_counter() - started) * 1000, source="section",
                            **path)
            metrics.inc(RECALL_METRIC, source="section", outcome="hit" if recalled else "miss", **path)
            if recalled:
                metrics.inc(RECALL_HITS_METRIC, len(recalled), source="section")
        pointers: tuple[Any, ...] = ()
        if index.enabled:
            pointers = tuple(store.recent(index.limit, working_dir=working_dir, exclude_ids=[n.id for n in recalled]))
        return RecallSnapshot(user_text, working_dir, recalled, pointers, extra, nearest, vectors)

    def _feedback(self, inject: Any) -> Any:
        """The memory plugin's QueryFeedback for these settings (built once per setting)."""
        key = (inject.feedback_docs, inject.feedback_terms)
        if self._feedback_settings is None or self._feedback_settings[0] != key:
            self._feedback_settings = (key, self._query_feedback(docs=inject.feedback_docs,
                                                                 terms=inject.feedback_terms))
        return self._feedback_settings[1]

    def prefetch(self, session_id: str, user_text: str, working_dir: str | None) -> RecallSnapshot:
        return self._keep(session_id, self._compute(session_id, user_text, working_dir))

    async def prefetch_hybrid(self, session_id: str, user_text: str, working_dir: str | None,
                              vectors: Any) -> RecallSnapshot:
        """The same snapshot with recall blended with the nearest note vectors;
        `vectors.nearest` never raises and answers None when the vector side is unusable,
        which leaves this turn's recall BM25 only."""
        started = time.perf_counter()
        inject = self._cfg.recall_injection
        nearest = None
        if inject.enabled and user_text.strip():
            nearest = await vectors.nearest(user_text, working_dir)
        return self._keep(session_id, self._compute(session_id, user_text, working_dir, nearest, vectors, started))

    def _keep(self, session_id: str, snapshot: RecallSnapshot) -> RecallSnapshot:
        self._snapshots[session_id] = snapshot
        self._snapshots.move_to_end(session_id)
        while len(self._snapshots) > MAX_SESSIONS:
            self._snapshots.popitem(last=False)
        return snapshot

    def snapshot(self, session_id: str, user_text: str) -> RecallSnapshot:
        found = self._snapshots.get(session_id)
        if found is not None and found.user_text == user_text:
            if found.extra_query == self._extensions.extra_query(session_id, user_text):
                return found
            # a rewrite that arrived after the prefetch: recompute, keeping its vector hits
            return self._keep(session_id, self._compute(session_id, user_text, found.working_dir,
                                                        found.nearest, found.vectors))
        return self.prefetch(session_id, user_text, found.working_dir if found is not None else None)

    def held_sessions(self) -> list[str]:
        return list(self._snapshots)
