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


def lessons_phase(runtime: RuntimeView, cfg: Any) -> MemoryPhase:
    from atomic_agent.api import MemoryPhase, PromptSection, capped_lines, estimate_tokens

    def sections(session_id: str, user_text: str) -> list[Any]:
        lessons = runtime.service(MEMORY_SERVICE).lesson_store(cfg.max_entries).recall(user_text, cfg.recall_k)
        if not lessons:
            return []
        body = capped_lines([lesson_pointer(lesson) for lesson in lessons], cfg.max_tokens, estimate_tokens)
        return [PromptSection(HEADING, body, slot="recall", max_tokens=cfg.max_tokens, dedupe_key=HEADING,
                              source="learned lessons")]

    return MemoryPhase(name="memory-lessons", order=PHASE_ORDER, sections=sections)


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
            found = store.recall(query, int(args.get("k") or cfg.recall_k))
        except memory.StoreError as exc:
            return ToolResult.error(str(exc), errorType=type(exc).__name__)
        if not found:
            return ToolResult.ok(f"no live lesson matches {query[:80]!r}", lessons=[])
        return ToolResult.ok("\n".join(lesson_body(x, store.missing_evidence(x)) for x in found),
                             lessons=[x.to_json() for x in found])

    return [ToolSpec("memory.lessons.recall", "Read a learned lesson's advice and evidence, by id from ### lessons "
                     "or by query.", RECALL_SCHEMA, ResourceClass.PURE_READ, recall, tier=Tier.RARE, durable=True)]
