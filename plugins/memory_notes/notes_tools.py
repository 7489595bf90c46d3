"""memory.notes.store | recall | forget — every write goes through NoteStore.store."""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from .recall_prefetch import RECALL_HITS_METRIC, RECALL_LATENCY_METRIC, RECALL_METRIC

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec

ID_ARG = {"type": ["integer", "string"], "description": "a note id such as 42 or \"#42\""}
STORE_SCHEMA = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "scope": {"type": "string", "enum": ["global", "workdir"]},
        "workingDir": {"type": "string"},
    },
    "required": ["content"],
    "additionalProperties": False,
}
RECALL_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "id": ID_ARG,
        "scope": {"type": "string", "enum": ["global", "workdir"]},
        "workingDir": {"type": "string"},
        "k": {"type": "integer", "minimum": 1, "maximum": 50},
    },
    "additionalProperties": False,
}
FORGET_SCHEMA = {"type": "object", "properties": {"id": ID_ARG}, "required": ["id"], "additionalProperties": False}
_ID = re.compile(r"^#?\s*(\d{1,18})$")
FULL_BODY_CHARS = 2000


def parse_note_id(raw: object) -> int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int):
        return raw if raw > 0 else None
    match = _ID.match(str(raw).strip()) if isinstance(raw, str) else None
    return int(match.group(1)) if match else None


def _full(note: Any) -> str:
    tags = f" [{', '.join(note.tags)}]" if note.tags else ""
    return f"#{note.id}{tags} {note.content[:FULL_BODY_CHARS]}"


def notes_tool_specs(runtime: RuntimeView, cfg: Any) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

    from .note_store_factory import memory_of, note_store_for

    def guarded(fn: Callable[[Mapping[str, Any], Any], Any]) -> Callable[[Mapping[str, Any], Any], Awaitable[Any]]:
        async def run(args: Mapping[str, Any], ctx: Any) -> Any:
            try:
                result = fn(args, ctx)
                return await result if inspect.isawaitable(result) else result
            except Exception as exc:
                if isinstance(exc, memory_of(runtime).StoreError):  # validation, lock, refusal: results, not crashes
                    return ToolResult.error(str(exc), errorType=type(exc).__name__)
                raise
        return run

    def store(args: Mapping[str, Any], ctx: Any) -> Any:
        scope = args.get("scope", "global")
        working_dir = args.get("workingDir") or (str(ctx.working_dir) if scope == "workdir" else None)
        outcome = note_store_for(runtime, cfg).store(args.get("content"), args.get("tags"), source="tool",
                                                      scope=scope, working_dir=working_dir,
                                                      session_id=ctx.session_id)
        note = outcome.note
        evicted = f"; evicted {len(outcome.evicted)} oldest" if outcome.evicted else ""
        return ToolResult.ok(f"stored #{note.id}{evicted}", note=note.to_json(), evicted=list(outcome.evicted))

    def recall(args: Mapping[str, Any], ctx: Any) -> Any:
        notes = note_store_for(runtime, cfg)
        if args.get("id") is not None:
            note_id = parse_note_id(args["id"])
            note = notes.get(note_id) if note_id is not None else None
            if note is None:
                return ToolResult.error(f"no note {args['id']!r}; ids come from ### memory-index or a recall query")
            return ToolResult.ok(_full(note), note=note.to_json())
        query = args.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error("pass query (words to search for) or id (a #id from ### memory-index)")
        k = int(args.get("k") or cfg.recall_default_k)
        working_dir = args.get("workingDir") or str(ctx.working_dir)
        started = time.perf_counter()
        vectors = memory_of(runtime).vector_recall  # set only by the memory_embeddings plugin
        if vectors is None:
            return answer(notes.recall(query, k, working_dir=working_dir, scope=args.get("scope")), query, started)

        async def hybrid() -> Any:  # the query is embedded first; any failure leaves this recall BM25 only
            nearest = await vectors.nearest(query, working_dir)
            blend = {} if nearest is None else {"nearest": nearest, "fusion": vectors.fusion,
                                                "candidates": vectors.candidates}
            return answer(notes.recall(query, k, working_dir=working_dir, scope=args.get("scope"), **blend), query,
                          started)

        return hybrid()

    def answer(hits: list[Any], query: str, started: float) -> Any:
        metrics = memory_of(runtime).metrics
        metrics.observe(RECALL_LATENCY_METRIC, (time.perf_counter() - started) * 1000, source="tool")
        metrics.inc(RECALL_METRIC, source="tool", outcome="hit" if hits else "miss")
        if not hits:
            return ToolResult.ok(f"no notes match {query!r}", notes=[])
        metrics.inc(RECALL_HITS_METRIC, len(hits), source="tool")
        return ToolResult.ok("\n".join(_full(h.note) for h in hits), notes=[h.note.to_json() for h in hits])

    def forget(args: Mapping[str, Any], ctx: Any) -> Any:
        note_id = parse_note_id(args.get("id"))
        if note_id is None:
            return ToolResult.error(f"id {args.get('id')!r} is not a note id; use a number such as 42 or \"#42\"")
        if not note_store_for(runtime, cfg).forget(note_id):
            return ToolResult.error(f"no note #{note_id}")
        return ToolResult.ok(f"forgot #{note_id}")

    return [
        ToolSpec("memory.notes.store", "Save a note worth recalling in later sessions (decisions, results, plans).",
                 STORE_SCHEMA, ResourceClass.MEMORY_WRITE, guarded(store),
                 example='{"tool": "memory.notes.store", "args": {"content": "Build uses make", "tags": ["build"]}}'),
        ToolSpec("memory.notes.recall", "Search notes by words (query) or open one by id from ### memory-index.",
                 RECALL_SCHEMA, ResourceClass.PURE_READ, guarded(recall),
                 example='{"tool": "memory.notes.recall", "args": {"id": 42}}'),
        ToolSpec("memory.notes.forget", "Delete one note by id.", FORGET_SCHEMA, ResourceClass.MEMORY_WRITE,
                 guarded(forget), tier=Tier.RARE),
    ]
