"""Lessons from troubled turns (memory v2 phase 5, the hot path).

After a turn that failed, took a detour, or that the user's next message corrected (see the
memory plugin's turn_trouble), one grammar-constrained call on the reflection slot reads that
turn (quoted as data: the request, each tool step with its outcome, the reply, the correction)
and writes one lesson: when it applies, what to do then, a few tags; or abstains
(`LESSON none`). The lesson is stored as a `candidate` with its evidence: an episode note
saying what went wrong in which turn (when the notes channel is on). A turn is distilled once,
however often its session is replayed (the lesson's origin is "session#turn"), and a turn
the user corrects is distilled from the correction rather than from its own outcome.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE, Memory

from .reflection_call import ReflectionCall

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

PREFIX_TEMPLATE = "turn_lesson.j2"
TURN_TEMPLATE = "turn_lesson_turn.j2"
GRAMMAR_FILE = "turn_lesson.gbnf"
LESSONS_BLOCK = "memoryLessons"  # the memory_notes plugin's switch: no lessons recalled, none distilled
NOTES_BLOCK = "memoryNotes"
EPISODE_TAG = "episode"
OUTCOME_METRIC = "agent.memory.lessons.distilled"
# turn_lesson.gbnf's longest answer is about 690 characters and a token is at least one, so
# this limit never cuts off a lesson the grammar still allows (a cut line cannot be parsed)
N_PREDICT = 720


@attrs.frozen
class TurnLessonOutcome:
    outcome: str  # ok | none (abstained) | known (distilled before) | failed | timeout
    kind: str
    origin: str
    lesson_id: int | None = None
    evidence: tuple[int, ...] = ()
    error: str | None = None


def _on(runtime: RuntimeView, key: str) -> Any | None:
    block = runtime.config.blocks.get(key)
    return block if block is not None and getattr(block, "enabled", False) else None


def episode_text(trouble: Any) -> str:
    """The evidence note: which turn, what kind of trouble, what was seen."""
    signals = "; ".join(trouble.signals)
    return (f"Turn {trouble.turn_index} went wrong ({trouble.kind}) on the request {trouble.user_text[:200]!r}: "
            f"{signals}")[:1500]


class TurnLessonDistiller:
    def __init__(self, runtime: RuntimeView, cfg: Any, assets: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.call = ReflectionCall(runtime, assets, prefix_template=PREFIX_TEMPLATE, turn_template=TURN_TEMPLATE,
                                   grammar_file=GRAMMAR_FILE, n_predict=N_PREDICT, purpose="lessons")
        self.outcomes: list[TurnLessonOutcome] = []  # the last few, for tests and `status`

    @property
    def memory(self) -> Memory:
        return self.runtime.service(MEMORY_SERVICE)

    def enabled(self) -> bool:
        return bool(self.cfg.distil_lessons) and _on(self.runtime, LESSONS_BLOCK) is not None

    def trouble(self, digest: Any) -> Any | None:
        """The troubled turn this finished turn points at: the previous one when this user
        message corrects it, else this one when it failed or took a detour, else None."""
        if not self.enabled():
            return None
        memory = self.memory
        entries = self.runtime.sessions.entries(digest.session_id)
        if digest.turn_index > 0 and memory.corrects(digest.user_text):
            corrected = memory.assess_turn(entries, digest.session_id, digest.turn_index - 1,
                                           correction=digest.user_text, detour_calls=self.cfg.detour_calls)
            if corrected is not None:
                return corrected
        return memory.assess_turn(entries, digest.session_id, digest.turn_index, detour_calls=self.cfg.detour_calls)

    def prompt(self, trouble: Any) -> str:
        return self.call.prompt(
            kind=trouble.kind, user_text=trouble.user_text, steps=trouble.steps, reply_text=trouble.reply_text,
            correction=trouble.correction, signals=trouble.signals)

    async def distil(self, trouble: Any) -> TurnLessonOutcome:
        """One call, one lesson (or an abstention); never raises except when cancelled."""
        try:
            result = await self._distil(trouble)
        except TimeoutError:
            result = TurnLessonOutcome("timeout", trouble.kind, trouble.origin,
                                       error=f"no answer within {self.cfg.timeout_ms} ms")
        except Exception as exc:  # a garbled answer or a locked database: counted, the turn is long over
            result = TurnLessonOutcome("failed", trouble.kind, trouble.origin, error=f"{type(exc).__name__}: {exc}")
        self.memory.metrics.inc(OUTCOME_METRIC, outcome=result.outcome, kind=trouble.kind)
        self.outcomes = [*self.outcomes[-31:], result]
        return result

    async def _distil(self, trouble: Any) -> TurnLessonOutcome:
        from .turn_lesson_parser import parse_turn_lesson

        lessons_cfg = _on(self.runtime, LESSONS_BLOCK)
        memory = self.memory
        store = memory.lesson_store(lessons_cfg.max_entries) if lessons_cfg is not None else memory.lesson_store()
        known = store.by_origin(trouble.origin)
        if known is not None:  # a replayed session: this turn taught its lesson already
            return TurnLessonOutcome("known", trouble.kind, trouble.origin, known.id, known.evidence)
        answer = await self.call.complete(memory, trouble.session_id, self.prompt(trouble), self.cfg.timeout_ms / 1000)
        parsed = parse_turn_lesson(answer)
        if parsed is None:
            return TurnLessonOutcome("none", trouble.kind, trouble.origin)
        evidence = self._episode(trouble)
        try:
            lesson, _swept = store.create(parsed.trigger, parsed.advice, parsed.tags, evidence,
                                          source=f"{trouble.kind} turn", origin=trouble.origin)
        except memory.ValidationError:  # tags the store refuses: the lesson still counts without them
            lesson, _swept = store.create(parsed.trigger, parsed.advice, (), evidence,
                                          source=f"{trouble.kind} turn", origin=trouble.origin)
        return TurnLessonOutcome("ok", trouble.kind, trouble.origin, lesson.id, lesson.evidence)

    def _episode(self, trouble: Any) -> tuple[int, ...]:
        """The evidence note for the lesson (none when the notes channel is off)."""
        notes_cfg = _on(self.runtime, NOTES_BLOCK)
        if notes_cfg is None:
            return ()
        notes = self.memory.note_store(max_entries=notes_cfg.max_entries,
                                       max_content_chars=notes_cfg.max_content_chars)
        stored = notes.store(episode_text(trouble)[: notes_cfg.max_content_chars], [EPISODE_TAG, trouble.kind],
                             source="reflection", session_id=trouble.session_id)
        return (int(stored.note.id),)
