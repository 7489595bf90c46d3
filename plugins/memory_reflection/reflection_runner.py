"""Run one reflection per finished turn, off the turn's critical path.

At most one reflection is in flight per session: the next turn of that session aborts
it (and a reflection whose session already moved on never starts). Sessions never abort
each other. Every outcome is counted: ok | none | failed | aborted | timeout.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import store_clock
from atomic_agent.plugins.memory.memory_contract import (  # memory.sqlite belongs to the memory plugin
    MEMORY_SERVICE,
    Memory,
)

from .reflection_writer import WriteReport, write_reflection

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

LATEST_TURNS_KEPT = 1024  # sessions whose newest turn index is remembered (a server may start one per request)
OUTCOME_METRIC = "agent.memory.reflection"
LATENCY_METRIC = "agent.memory.reflection.latency_ms"
WRITTEN_METRIC = "agent.memory.reflection.written"
REJECTED_METRIC = "agent.memory.reflection.rejected"
SKIPPED_METRIC = "agent.memory.reflection.skipped"
FLUSHED_METRIC = "agent.memory.reflection.stop_flush"
PROFILE_BLOCK = "memoryProfile"
NOTES_BLOCK = "memoryNotes"
PROMPT_ASSETS_SERVICE = "prompt_assets"  # templates and grammars: the user's, this plugin's, the core's
SEGMENTATION_BLOCK = "memorySegmentation"  # v2.5 B switch: sliding-window cadence (this plugin's block)
TYPED_NOTES_BLOCK = "memoryTypedNotes"  # v2.5 C switch: typed NOTE lines (this plugin's block)
TYPED_PREFIX_TEMPLATE = "reflection_typed.j2"
TYPED_GRAMMAR_FILE = "reflection_typed.gbnf"


@attrs.frozen
class ReflectionOutcome:
    outcome: str  # ok | none | failed | aborted | timeout
    report: WriteReport = attrs.field(factory=WriteReport)
    slot_id: int = -1
    error: str | None = None
    latency_ms: float = 0.0
    lesson: Any = None  # the turn-lesson outcome when this turn pointed at a troubled turn
    votes: Any = None  # the model's votes on the lessons this turn was shown


def _block(runtime: RuntimeView, key: str) -> Any | None:
    block = runtime.config.blocks.get(key)
    return block if block is not None and getattr(block, "enabled", False) else None


class ReflectionRunner:
    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        from .reflection_prompt import ReflectionPromptBuilder
        from .reflection_window import ReflectionWindow

        self.runtime = runtime
        self.cfg = cfg
        self.assets = runtime.service(PROMPT_ASSETS_SERVICE)
        self.typed = self._switch(TYPED_NOTES_BLOCK) is not None
        segmentation = self._switch(SEGMENTATION_BLOCK)
        self.window = ReflectionWindow(segmentation) if segmentation is not None else None
        prefix = {"prefix_template": TYPED_PREFIX_TEMPLATE} if self.typed else {}
        self.grammar_file = TYPED_GRAMMAR_FILE if self.typed else None
        self.prompts = ReflectionPromptBuilder(self.assets.env(), cfg.max_facts_per_call, cfg.max_notes_per_call,
                                               **prefix)
        from .lesson_votes import LessonVoter
        from .turn_lessons import TurnLessonDistiller

        self.lessons = TurnLessonDistiller(runtime, cfg, self.assets)
        self.voter = LessonVoter(runtime, cfg, self.assets)
        self._grammar: str | None = None
        self._pending: dict[str, asyncio.Task[Any]] = {}
        self._aborted: set[asyncio.Task[Any]] = set()
        self._latest_turn: OrderedDict[str, int] = OrderedDict()  # bounded: least recently started first
        self.outcomes: list[ReflectionOutcome] = []  # the last few, for tests and `status`

    def _switch(self, key: str) -> Any | None:
        """This plugin's switch block `key` (segmentation, typed notes) when it is on."""
        block = self.runtime.config.block(key)
        return block if block.enabled else None

    @property
    def memory(self) -> Memory:
        """The `memory` service (the memory plugin owns memory.sqlite)."""
        return self.runtime.service(MEMORY_SERVICE)

    @property
    def metrics(self) -> Any:
        return self.memory.metrics

    # -- concurrency ----------------------------------------------------------------------
    def before_turn(self, start: Any) -> None:
        """A new turn of `start.session_id` began: abort that session's reflection only."""
        self._latest_turn[start.session_id] = max(start.turn_index, self._latest_turn.get(start.session_id, -1))
        self._latest_turn.move_to_end(start.session_id)
        while len(self._latest_turn) > LATEST_TURNS_KEPT:  # a session idle that long has no reflection to stop
            self._latest_turn.popitem(last=False)
        self.abort(start.session_id)

    def abort(self, session_id: str) -> bool:
        task = self._pending.get(session_id)
        if task is None or task.done():
            return False
        self._aborted.add(task)
        task.cancel()
        return True

    def in_flight(self, session_id: str) -> bool:
        task = self._pending.get(session_id)
        return task is not None and not task.done()

    # -- the hot path ---------------------------------------------------------------------
    async def after_turn(self, digest: Any) -> ReflectionOutcome | None:
        transcript = None
        reflect = True
        trouble = self._trouble(digest)
        shown = self._shown(digest)
        if self.window is not None:
            transcript = self.window.window(digest)
            if transcript is None:
                self.metrics.inc(SKIPPED_METRIC, reason="cadence")
                reflect = False
        elif not digest.reply_text.strip():
            self.metrics.inc(SKIPPED_METRIC, reason="no_reply")
            reflect = False
        if not reflect and trouble is None and not shown:
            return None
        if self._latest_turn.get(digest.session_id, -1) > digest.turn_index:
            return self._finish(digest, ReflectionOutcome("aborted", error="a newer turn had started"))
        task = asyncio.current_task()
        assert task is not None
        previous = self._pending.get(digest.session_id)
        if previous is not None and previous is not task and not previous.done():
            self._aborted.add(previous)
            previous.cancel()
        self._pending[digest.session_id] = task
        started = time.perf_counter()
        try:
            result = (await self._reflect(digest, transcript) if reflect
                      else ReflectionOutcome("none", error="nothing to reflect on"))
            if trouble is not None:  # a failed, corrected or detoured turn: its lesson, after the facts
                result = attrs.evolve(result, lesson=await self.lessons.distil(trouble))
            if shown:  # the lessons this turn was shown: the model's votes, last
                result = attrs.evolve(result, votes=await self.voter.vote(digest, shown))
        except asyncio.CancelledError:
            result = ReflectionOutcome("aborted", error="the next turn of this session started")
            if task not in self._aborted:  # cancelled from outside (shutdown): count it, then let it end
                self._finish(digest, attrs.evolve(result, latency_ms=_ms(started)))
                raise
        except TimeoutError:
            result = ReflectionOutcome("timeout", error=f"no answer within {self.cfg.timeout_ms} ms")
        except Exception as exc:  # never crash the loop: count, trace, move on
            result = ReflectionOutcome("failed", error=f"{type(exc).__name__}: {exc}")
        finally:
            if self._pending.get(digest.session_id) is task:
                del self._pending[digest.session_id]
            self._aborted.discard(task)
        return self._finish(digest, attrs.evolve(result, latency_ms=_ms(started)))

    # -- a graceful stop ------------------------------------------------------------------
    async def flush_pending(self) -> list[ReflectionOutcome]:
        """At a graceful stop (runtime_stopping, after every turn and after-turn task ended):
        reflect over each session's turns since its last cadence point (v2.5 B's pending
        windows), one session at a time, each within `timeoutMs`. Nothing without the
        segmentation switch (every pair was reflected already)."""
        if self.window is None:
            return []
        outcomes = []
        for pending in self.window.take_pending():
            digest = pending.digest
            started = time.perf_counter()
            try:
                result = await self._reflect(digest, pending.pairs)
            except TimeoutError:
                result = ReflectionOutcome("timeout", error=f"no answer within {self.cfg.timeout_ms} ms")
            except Exception as exc:  # a stop never fails on a reflection: count, trace, next session
                result = ReflectionOutcome("failed", error=f"{type(exc).__name__}: {exc}")
            self.metrics.inc(FLUSHED_METRIC, outcome=result.outcome)
            outcomes.append(self._finish(digest, attrs.evolve(result, latency_ms=_ms(started))))
        return outcomes

    def _shown(self, digest: Any) -> tuple[int, ...]:
        try:
            return self.voter.allowlist(digest)
        except Exception:
            return ()

    def _trouble(self, digest: Any) -> Any | None:
        try:
            return self.lessons.trouble(digest)
        except Exception:  # a transcript that cannot be read: the facts and notes still go ahead
            return None

    async def _reflect(self, digest: Any, transcript: Any | None = None) -> ReflectionOutcome:
        from atomic_agent.api import CompletionRequest

        from .note_context import exchange_context
        from .reflection_grammar import GRAMMAR_FILE, reflection_grammar
        from .reflection_parser import parse_reflection

        profile_cfg, notes_cfg = _block(self.runtime, PROFILE_BLOCK), _block(self.runtime, NOTES_BLOCK)
        notes_on = notes_cfg is not None and self.cfg.auto_store_notes and self.cfg.max_notes_per_call > 0
        if (profile_cfg is None or self.cfg.max_facts_per_call == 0) and not notes_on:
            return ReflectionOutcome("none", error="no memory channel to write to")
        provider = self.runtime.provider
        slot = self.memory.background_slot(provider, digest.session_id, "reflection")
        prompt = self.prompts.build(digest.user_text, digest.reply_text, await self._profile(), transcript)
        grammar = None
        if provider.capabilities.transport == "grammar":
            if self._grammar is None:
                self._grammar = reflection_grammar(self.assets, self.grammar_file or GRAMMAR_FILE)
            grammar = self._grammar
        request = CompletionRequest(prompt=prompt.text, grammar=grammar, n_predict=self.cfg.n_predict, slot_id=slot,
                                    cache_prompt=True, temperature=0.1, stream=False,
                                    prefix_length=prompt.prefix_length)
        completion = await asyncio.wait_for(provider.complete(request), self.cfg.timeout_ms / 1000)
        cut = bool(completion.truncated or completion.stop_type == "limit")
        memory = self.memory
        parsed = parse_reflection(completion.content, valid_key=memory.is_valid_profile_key, drop_last_line=cut,
                                  typed=self.typed)
        said = "\n".join(p.user_text for p in transcript) if transcript else digest.user_text
        heard = "\n".join(p.reply_text for p in transcript) if transcript else digest.reply_text
        profile = memory.profile_store() if profile_cfg is not None else None
        notes = (memory.note_store(max_entries=notes_cfg.max_entries, max_content_chars=notes_cfg.max_content_chars)
                 if notes_on and notes_cfg is not None else None)
        report = write_reflection(parsed, profile=profile, notes=notes, max_facts=self.cfg.max_facts_per_call,
                                  max_notes=self.cfg.max_notes_per_call, session_id=digest.session_id,
                                  invalid=memory.ValidationError, instructions=self.prompts.stable_prefix,
                                  user_text=said, context=exchange_context(said, heard, store_clock.now_ms()))
        return ReflectionOutcome("ok" if report.written else "none", report, slot)

    async def _profile(self) -> Any | None:
        plan = getattr(self.runtime, "prompt_plan", None)
        if plan is None:
            return None
        try:
            return (await plan()).profile
        except Exception:
            return None  # plain framing still works; the reply has been delivered already

    def _finish(self, digest: Any, result: ReflectionOutcome) -> ReflectionOutcome:
        self.metrics.inc(OUTCOME_METRIC, outcome=result.outcome)
        self.metrics.observe(LATENCY_METRIC, result.latency_ms, outcome=result.outcome)
        report = result.report
        if report.facts:
            self.metrics.inc(WRITTEN_METRIC, len(report.facts), kind="fact")
        if report.notes:
            self.metrics.inc(WRITTEN_METRIC, len(report.notes), kind="note")
        if report.rejected:
            self.metrics.inc(REJECTED_METRIC, len(report.rejected))
        self.outcomes = [*self.outcomes[-31:], result]
        trace_for = getattr(self.runtime, "trace_for", None)
        if trace_for is not None:
            try:
                trace_for(digest.session_id).record(
                    "memory_reflection", turnIndex=digest.turn_index, outcome=result.outcome, slotId=result.slot_id,
                    latencyMs=round(result.latency_ms, 1), facts=[f.key for f in report.facts],
                    notes=[n.id for n in report.notes],
                    rejected=[[r.line[:120], r.reason] for r in report.rejected][:10],
                    error=result.error, **_lesson_fields(result.lesson), **_vote_fields(result.votes))
            except Exception:
                pass  # a trace that cannot be written never fails the reflection
        return result


def _lesson_fields(lesson: Any) -> dict[str, Any]:
    if lesson is None:
        return {}
    return {"lesson": {"outcome": lesson.outcome, "kind": lesson.kind, "origin": lesson.origin,
                       "lessonId": lesson.lesson_id, "evidence": list(lesson.evidence), "error": lesson.error}}


def _vote_fields(votes: Any) -> dict[str, Any]:
    if votes is None:
        return {}
    return {"lessonVotes": {"outcome": votes.outcome, "applied": [list(a) for a in votes.applied],
                            "rejected": [list(r) for r in votes.rejected][:8], "error": votes.error}}


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
