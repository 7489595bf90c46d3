"""Procedure templates in the prompt: `### procedures` (pointer-only: `p<id> (source, day) trigger`,
never the steps) and `memory.procedures.recall {id | query}`, which shows the steps as text.

The miner: after a turn that ended in a reply and took two or more tool steps, its tool
sequence is recorded; a sequence that keeps answering alike requests becomes a procedure
(ProcedureStore). Nothing here, or anywhere, executes a procedure's steps: they are advice the
model reads, and a step whose tool is no longer registered says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

from .note_lines import preview, provenance

if TYPE_CHECKING:
    from atomic_agent.api import MemoryPhase, RuntimeView, ToolSpec

HEADING = "procedures"
PHASE_ORDER = 16  # after lessons, before the recalled notes
NOT_STEPS = {"reply", "finish", "tool.view"}  # bookkeeping calls, not steps of the work
RECALL_SCHEMA = {
    "type": "object",
    "properties": {"id": {"type": "integer", "minimum": 1, "description": "a procedure id from ### procedures"},
                   "query": {"type": "string"}},
    "additionalProperties": False,
}


def procedure_pointer(procedure: Any) -> str:
    return f"p{procedure.id} {provenance(procedure.source, procedure.created_at)} {preview(procedure.trigger, 160)}"


def procedure_text(procedure: Any, registered: set[str]) -> str:
    lines = [f"p{procedure.id} {procedure.status}: {procedure.trigger} (advice: adapt each step, check its result)"]
    for i, step in enumerate(procedure.steps, 1):
        hint = ""
        if step.tool:
            hint = f" [@{step.tool}]" if step.tool in registered else f" [@{step.tool}: no longer registered]"
        lines.append(f"{i}. {step.text}{hint}")
    return "\n".join(lines)


def turn_steps(entries: Any, turn_index: int) -> list[tuple[str, str]]:
    """The work steps of one turn as (what was done, tool): its tool calls in order,
    bookkeeping left out, a call repeated back to back counted once."""
    steps: list[tuple[str, str]] = []
    for entry in entries:
        if entry.turn_index != turn_index or entry.kind != "assistant_tool_call" or entry.tool in NOT_STEPS:
            continue
        keys = ", ".join(sorted((entry.args or {}).keys()))
        step = (f"call {entry.tool}" + (f" with {keys}" if keys else ""), str(entry.tool))
        if not steps or steps[-1] != step:
            steps.append(step)
    return steps


class ProcedureMiner:
    def __init__(self, runtime: RuntimeView, cfg: Any) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self.created: list[int] = []

    def store(self) -> Any:
        return self.runtime.service(MEMORY_SERVICE).procedure_store(self.cfg.min_runs)

    def sections(self, session_id: str, user_text: str) -> list[Any]:
        from atomic_agent.api import PromptSection, capped_lines, estimate_tokens

        found = self.store().recall(user_text, self.cfg.recall_k)
        if not found:
            return []
        body = capped_lines([procedure_pointer(p) for p in found], self.cfg.max_tokens, estimate_tokens)
        return [PromptSection(HEADING, body, slot="recall", max_tokens=self.cfg.max_tokens, dedupe_key=HEADING,
                              source="procedure templates")]

    async def after_turn(self, digest: Any) -> None:
        if digest.reason not in ("reply", "finish"):
            return  # only a turn that succeeded teaches how
        steps = turn_steps(self.runtime.sessions.entries(digest.session_id), digest.turn_index)
        if len(steps) < 2:
            return
        made = self.store().record_run(digest.session_id, digest.turn_index, digest.user_text, steps)
        if made is not None:
            self.created = [*self.created[-31:], made.id]


def procedures_phase(runtime: RuntimeView, cfg: Any) -> MemoryPhase:
    from atomic_agent.api import MemoryPhase

    miner = ProcedureMiner(runtime, cfg)
    return MemoryPhase(name="memory-procedures", order=PHASE_ORDER, sections=miner.sections,
                       after_turn=miner.after_turn)


def procedures_tool_specs(runtime: RuntimeView, cfg: Any) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

    async def recall(args: Mapping[str, Any], ctx: Any) -> Any:
        memory = runtime.service(MEMORY_SERVICE)
        store = memory.procedure_store(cfg.min_runs)
        registered = set(runtime.registry.names())
        try:
            if args.get("id") is not None:
                found = store.get(args["id"])
                if found is None:
                    return ToolResult.error(f"no procedure p{args['id']}; ### procedures lists the ids")
                return ToolResult.ok(procedure_text(found, registered), procedure=found.to_json())
            query = args.get("query")
            if not isinstance(query, str) or not query.strip():
                return ToolResult.error("give an id from ### procedures or a query")
            hits = store.recall(query, cfg.recall_k)
        except memory.StoreError as exc:
            return ToolResult.error(str(exc), errorType=type(exc).__name__)
        if not hits:
            return ToolResult.ok(f"no procedure matches {query[:80]!r}", procedures=[])
        return ToolResult.ok("\n".join(procedure_text(p, registered) for p in hits),
                             procedures=[p.to_json() for p in hits])

    return [ToolSpec("memory.procedures.recall", "Read a procedure template's steps (advice, never run for you), "
                     "by id from ### procedures or by query.", RECALL_SCHEMA, ResourceClass.PURE_READ, recall,
                     tier=Tier.RARE, durable=True)]
