"""`### lessons` (pointer-only: `*id (source, day) [tags] trigger`, never the advice) and the
`memory.lessons.recall {id | query}` tool that reads a lesson's advice and evidence."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

from .note_lines import preview, provenance

if TYPE_CHECKING:
    from atomic_agent.api import MemoryPhase, RuntimeView, ToolSpec

HEADING = "lessons"
PHASE_ORDER = 15  # after the profile, before the notes' recalled section
RECALL_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 1, "description": "a lesson id from ### lessons"},
                   "query": {"type": "string"}, "k": {"type": "integer", "minimum": 1, "maximum": 10}},
    "additionalProperties": False,
}


def lesson_pointer(lesson: Any) -> str:
    tags = f" [{', '.join(lesson.tags)}]" if lesson.tags else ""
    return f"*{lesson.id} {provenance(lesson.source, lesson.created_at)}{tags} {preview(lesson.trigger, 160)}"


def lesson_body(lesson: Any, missing: tuple[int, ...]) -> str:
    evidence = ", ".join(f"#{i}" + (" (gone)" if i in missing else "") for i in lesson.evidence) or "none"
    return (f"*{lesson.id} {lesson.status} (votes +{lesson.success_count}/-{lesson.failure_count}) "
            f"{provenance(lesson.source, lesson.created_at)}\nwhen: {lesson.trigger}\nadvice: {lesson.advice}\n"
            f"evidence: {evidence}")


SUCCESS_REASONS = ("reply", "finish")
NO_VERDICT_REASONS = ("max_steps", "cancelled", "interrupted")  # no clean signal either way


def turn_verdict(reason: str) -> bool | None:
    """Whether the lessons a turn was shown helped (True), hurt (False) or say nothing (None)."""
    if reason in SUCCESS_REASONS:
        return True
    if reason in NO_VERDICT_REASONS:
        return None
    return False  # a failure category


class LessonLifecycle:
    """The lessons each running turn was shown (union over its steps), voted on once when the
    turn ends: a reply or finish is a vote for them, a failure a vote against; a cancelled,
    interrupted or out-of-steps turn votes nothing. When the user's next message corrects
    the reply, that turn's votes for its lessons turn into votes against them (once). A
    replayed turn cannot vote twice (the store keys votes by session and turn) and one
    failing vote never stops the others."""

    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.surfaced: dict[str, set[int]] = {}
        self.turns: dict[str, int] = {}  # the running turn of each session
        self.votes: list[tuple[int, str]] = []  # (lesson id, store outcome) of recent votes, for tests and doctor
        self.overturned: list[tuple[int, int]] = []  # (lesson id, corrected turn) of recent overturned votes

    def store(self) -> Any:
        return self.runtime.service(MEMORY_SERVICE).lesson_store(self.cfg.max_entries)

    def before_turn(self, start: Any) -> None:
        self.surfaced[start.session_id] = set()
        self.turns[start.session_id] = start.turn_index

    def sections(self, session_id: str, user_text: str) -> list[Any]:
        from atomic_agent.api import PromptSection, capped_lines, estimate_tokens

        lessons = self.store().recall(user_text, self.cfg.recall_k, score_blend=self.cfg.score_blend)
        if not lessons:
            return []
        body = capped_lines([lesson_pointer(lesson) for lesson in lessons], self.cfg.max_tokens, estimate_tokens)
        shown = {int(line[1:].split(" ", 1)[0]) for line in body.splitlines() if line.startswith("*")}
        self.surfaced.setdefault(session_id, set()).update(shown)
        if session_id in self.turns:  # the reflection model may vote on exactly these
            self.runtime.service(MEMORY_SERVICE).show_lessons(session_id, self.turns[session_id], sorted(shown))
        return [PromptSection(HEADING, body, slot="recall", max_tokens=self.cfg.max_tokens, dedupe_key=HEADING,
                              source="learned lessons")]

    async def after_turn(self, digest: Any) -> None:
        shown = self.surfaced.pop(digest.session_id, set())
        if self.turns.get(digest.session_id) == digest.turn_index:
            del self.turns[digest.session_id]
        if digest.turn_index > 0 and self.runtime.service(MEMORY_SERVICE).corrects(digest.user_text):
            self._overturn(digest.session_id, digest.turn_index - 1)
        verdict = turn_verdict(digest.reason)
        if not shown or verdict is None:
            return
        store = self.store()
        for lesson_id in sorted(shown):
            try:
                outcome = store.vote(lesson_id, digest.session_id, digest.turn_index, verdict)
            except Exception as exc:  # a locked database or a vanished row: the next lesson still votes
                outcome = f"failed: {type(exc).__name__}"
            self.votes = [*self.votes[-63:], (lesson_id, outcome)]

    def _overturn(self, session_id: str, corrected_turn: int) -> None:
        """The user corrected turn `corrected_turn`: the lessons it voted for count against."""
        try:
            turned = self.store().overturn(session_id, corrected_turn)
        except Exception:  # a locked database: this turn's own votes still go ahead
            return
        self.overturned = [*self.overturned[-63:], *((i, corrected_turn) for i in turned)]


def lessons_phase(runtime: RuntimeView, cfg: Any) -> MemoryPhase:
    from atomic_agent.api import MemoryPhase

    lifecycle = LessonLifecycle(runtime, cfg)
    return MemoryPhase(name="memory-lessons", order=PHASE_ORDER, sections=lifecycle.sections,
                       before_turn=lifecycle.before_turn, after_turn=lifecycle.after_turn)


def lessons_tool_specs(runtime: RuntimeView, cfg: Any) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

    async def recall(args: Mapping[str, Any], ctx: Any) -> Any:
        memory = runtime.service(MEMORY_SERVICE)
        store = memory.lesson_store(cfg.max_entries)
        try:
            if args.get("id") is not None:
                lesson = store.get(args["id"])
                if lesson is None:
                    return ToolResult.error(f"no lesson *{args['id']}; ### lessons lists the ids")
                return ToolResult.ok(lesson_body(lesson, store.missing_evidence(lesson)), lesson=lesson.to_json())
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                return ToolResult.error("give an id from ### lessons or a query")
            found = store.recall(query, int(args.get("k") or cfg.recall_k), score_blend=cfg.score_blend)
        except memory.StoreError as exc:
            return ToolResult.error(str(exc), errorType=type(exc).__name__)
        if not found:
            return ToolResult.ok(f"no live lesson matches {query[:80]!r}", lessons=[])
        return ToolResult.ok("\n".join(lesson_body(x, store.missing_evidence(x)) for x in found),
                             lessons=[x.to_json() for x in found])

    return [ToolSpec("memory.lessons.recall", "Read a learned lesson's advice and evidence, by id from ### lessons "
                     "or by query.", RECALL_SCHEMA, ResourceClass.PURE_READ, recall, tier=Tier.RARE, durable=True)]
