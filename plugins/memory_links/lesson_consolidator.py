"""The cold-path consolidator: clusters of linked notes become lessons.

One tick (the runtime's memory consolidation tick, or `run_once`):
1. candidates: notes not yet folded into a lesson, older than the cooldown;
2. clusters: connected components of the link graph among them, at least `minClusterSize`
   notes, at most `maxClustersPerTick` per tick;
3. a cluster is taken whole or not at all: every member's lease, else it is skipped;
4. one completion per cluster, on the background (reflection) slot, never the main one;
5. a lesson is stored (candidate, evidence = the cluster) and its notes are archived into it
   (they leave ### memory-index and stay readable by id); an abstain archives nothing;
6. leases are released whatever happened; a failing cluster never stops its siblings;
7. on every tick, clusters or not: duplicate live lessons merge into the stronger, vote
   scores decay once, then lessons that never helped a turn retire, the downvoted first,
   then the aged-out (the store's `curate`); the vote scores of notes and profile facts decay
   by the same factor (one statement per table).
Two ticks at once collapse to one (the second returns an empty tick).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

from .lesson_parser import parse_lesson

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

PREFIX_TEMPLATE = "lesson_distill.j2"
TAIL_TEMPLATE = "lesson_cluster.j2"
GRAMMAR_FILE = "lesson_distill.gbnf"
RUN_METRIC = "agent.memory.consolidation.run"
CREATED_METRIC = "agent.memory.lessons.created"
NOTE_CHARS = 300
DEFAULT_SIGNAL_DECAY = 0.95  # memoryLessons.signalDecay's default, when that block is not loaded
SESSION = "memory-consolidator"  # the background slot's owner name for these calls


@attrs.frozen
class ConsolidationTick:
    outcome: str  # ok | none | failed
    clusters: int = 0
    lessons: tuple[int, ...] = ()
    abstained: int = 0
    skipped: int = 0
    failed: int = 0
    errors: tuple[str, ...] = ()
    curation: Any = None  # the lesson store's Curation of this tick (None when it could not run)
    recall_decay: Any = None  # the notes' and profile facts' vote decay of this tick (None: did not run)


def clusters_of(ids: Iterable[int], edges: Iterable[tuple[int, int]], min_size: int) -> list[list[int]]:
    """Connected components (undirected) among `ids`, each sorted, at least `min_size` long,
    largest first (ties: lowest id first)."""
    members = set(ids)
    graph: dict[int, set[int]] = defaultdict(set)
    for a, b in edges:
        if a in members and b in members and a != b:
            graph[a].add(b)
            graph[b].add(a)
    seen: set[int] = set()
    out: list[list[int]] = []
    for start in sorted(graph):
        if start in seen:
            continue
        component, stack = [], [start]
        seen.add(start)
        while stack:
            node = stack.pop()
            component.append(node)
            for nxt in graph[node] - seen:
                seen.add(nxt)
                stack.append(nxt)
        if len(component) >= min_size:
            out.append(sorted(component))
    return sorted(out, key=lambda c: (-len(c), c[0]))


class LessonConsolidator:
    def __init__(self, runtime: RuntimeView, cfg: Any, lessons_cfg: Any = None) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.lessons_cfg = lessons_cfg
        self._curated_at: int | None = None  # the previous curation: duplicates older than it were compared
        self.max_lessons = getattr(lessons_cfg, "max_entries", 200)
        self._running = False
        self.ticks: list[ConsolidationTick] = []

    async def consolidate(self, *_args: Any) -> None:
        await self.run_once()

    async def run_once(self, now: int | None = None) -> ConsolidationTick:
        if self._running:
            return ConsolidationTick("none")  # another tick is in flight
        self._running = True
        try:
            tick = await self._tick(now)
        finally:
            self._running = False
        self.ticks = [*self.ticks[-31:], tick]
        try:
            self.runtime.service(MEMORY_SERVICE).metrics.inc(RUN_METRIC, outcome=tick.outcome)
        except Exception:
            pass  # memory.sqlite unusable: the tick is still kept above
        return tick

    async def _tick(self, now: int | None) -> ConsolidationTick:
        from atomic_agent.api import store_clock

        memory = self.runtime.service(MEMORY_SERVICE)
        notes = memory.note_store()
        stamp = store_clock.now_ms() if now is None else now
        candidates = notes.unconsolidated_ids(stamp - self.cfg.cooldown_ms)
        edges = [(link.from_id, link.to_id) for link in memory.link_store().all_links()]
        clusters = clusters_of(candidates, edges, self.cfg.min_cluster_size)[: self.cfg.max_clusters_per_tick]
        lessons: list[int] = []
        abstained = skipped = failed = 0
        errors: list[str] = []
        for cluster in clusters:  # serial: one call at a time on the background slot
            taken = [i for i in cluster if memory.acquire_lease(i)]
            try:
                if len(taken) < len(cluster):
                    skipped += 1  # a member is leased elsewhere: the cluster waits for a later tick
                    continue
                lesson_id = await self._distill(memory, notes, cluster)
                if lesson_id is None:
                    abstained += 1
                else:
                    lessons.append(lesson_id)
            except Exception as exc:  # one cluster's failure never stops the others
                failed += 1
                errors.append(f"{type(exc).__name__}: {exc}"[:200])
            finally:
                for note_id in taken:
                    memory.release_lease(note_id)
        outcome = "ok" if lessons else ("failed" if clusters and failed == len(clusters) else "none")
        curation = self._curate(memory, stamp, errors)
        recall_decay = self._decay_recall_votes(memory, errors)
        return ConsolidationTick(outcome, len(clusters), tuple(lessons), abstained, skipped, failed, tuple(errors),
                                 curation, recall_decay)

    def _decay_recall_votes(self, memory: Any, errors: list[str]) -> Any:
        """Decay the notes' and profile facts' vote scores once this tick (the lessons' factor)."""
        factor = getattr(self.lessons_cfg, "signal_decay", DEFAULT_SIGNAL_DECAY)
        try:
            return memory.recall_vote_store().decay(factor)
        except Exception as exc:  # a locked database: the next tick decays
            errors.append(f"vote decay: {type(exc).__name__}: {exc}"[:200])
            return None

    def _curate(self, memory: Any, stamp: int, errors: list[str]) -> Any:
        """Decay the lesson votes and retire what never helped (every tick, clusters or not)."""
        cfg = self.lessons_cfg
        try:
            store = memory.lesson_store(self.max_lessons)
            since, self._curated_at = self._curated_at, stamp
            if cfg is None:
                return store.curate(since=since, now=stamp)
            return store.curate(decay=cfg.signal_decay, age_ms=cfg.deprecation_age_days * 24 * 3600 * 1000,
                                since=since, now=stamp)
        except Exception as exc:  # a locked database: the next tick tries again
            errors.append(f"curation: {type(exc).__name__}: {exc}"[:200])
            return None

    async def _distill(self, memory: Any, notes: Any, cluster: list[int]) -> int | None:
        from atomic_agent.api import CompletionRequest

        rows = [n for n in (notes.get(i) for i in cluster) if n is not None]
        if len(rows) < self.cfg.min_cluster_size:
            return None  # forgotten meanwhile
        assets = self.runtime.service("prompt_assets")
        prefix = assets.env().get_template(PREFIX_TEMPLATE).render()
        tail = assets.env().get_template(TAIL_TEMPLATE).render(
            notes=[{"id": n.id, "text": _clip(n.content, NOTE_CHARS)} for n in rows])
        provider = self.runtime.provider
        grammar = assets.grammar(GRAMMAR_FILE) if provider.capabilities.transport == "grammar" else None
        grammar = "\n".join(ln for ln in (grammar or "").splitlines() if ln.strip() and not ln.startswith("#")) or None
        request = CompletionRequest(prompt=prefix + tail, grammar=grammar, n_predict=self.cfg.n_predict,
                                    slot_id=memory.background_slot(provider, SESSION, "consolidator"),
                                    cache_prompt=True, temperature=0.1, stream=False, prefix_length=len(prefix))
        started = time.perf_counter()
        completion = await asyncio.wait_for(provider.complete(request), self.cfg.distill_timeout_ms / 1000)
        parsed = parse_lesson(completion.content)
        if parsed is None:
            return None  # abstain: nothing archived, the cluster can be tried again later
        lesson, _swept = memory.lesson_store(self.max_lessons).create(
            parsed.trigger, parsed.advice, parsed.tags, [n.id for n in rows], source="consolidator")
        notes.archive_into([n.id for n in rows], lesson.id)
        memory.metrics.inc(CREATED_METRIC, source="consolidator")
        memory.metrics.observe("agent.memory.consolidation.distill_latency_ms", (time.perf_counter() - started) * 1000)
        return int(lesson.id)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"
