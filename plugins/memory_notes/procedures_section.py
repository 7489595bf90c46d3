"""Procedure templates in the prompt: `### procedures` (pointer-only: `p<id> (source, day) trigger`,
never the steps) and `memory.procedures.recall {id | query}`, which shows the steps as text.

The miner: after a turn that ended in a reply and took two or more tool steps, its tool
sequence is recorded; a sequence that keeps answering alike requests becomes a procedure
(ProcedureStore). A turn in trouble teaches nothing: one that failed or had a tool call end
in an error is not recorded, and one the user's next message corrects is forgotten again
(a procedure it leaves short of evidence is deprecated). Nothing here, or anywhere, executes
a procedure's steps: they are advice the model reads. A procedure naming a tool that is no
longer registered is left out of ### procedures and of query recall, with a notice: a turn
notice for the person as the turn ends (once per session and procedure), a metric, a line in
the session trace, a line in the recall tool's answer; read by id it shows, each such step
marked.
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
SKIPPED_METRIC = "agent.memory.procedures.skipped"
MINED_METRIC = "agent.memory.procedures.runs"
NOTIFIED_KEPT = 1024  # (session, procedure) pairs whose skip notice was traced
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


def missing_tools(procedure: Any, registered: set[str]) -> list[str]:
    """The tools a procedure's steps name that are not registered now, in step order."""
    return list(dict.fromkeys(s.tool for s in procedure.steps if s.tool and s.tool not in registered))


def had_tool_error(entries: Any, turn_index: int) -> bool:
    """Did any tool call of this turn end in an error (a loop guard's veto included)?"""
    return any(e.turn_index == turn_index and e.kind == "tool_result" and e.status == "error" for e in entries)


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
        self.skipped: list[tuple[int, tuple[str, ...]]] = []  # (procedure id, unregistered tools), recent
        self.runs: list[tuple[int, str]] = []  # (turn, recorded | failed | tool_error | corrected ...), recent
        self._notified: dict[tuple[str, int], None] = {}
        self._notices: dict[str, list[str]] = {}  # session -> turn notices not yet shown

    def store(self) -> Any:
        return self.runtime.service(MEMORY_SERVICE).procedure_store(self.cfg.min_runs)

    def usable(self, found: list[Any], session_id: str) -> list[Any]:
        """`found` without the procedures that name a tool no longer registered (each noticed)."""
        registered = set(self.runtime.registry.names())
        kept = []
        for procedure in found:
            missing = missing_tools(procedure, registered)
            if missing:
                self.notice_skip(session_id, procedure, missing)
            else:
                kept.append(procedure)
        return kept

    def notice_skip(self, session_id: str, procedure: Any, missing: list[str]) -> None:
        """Count the skip; trace it once per (session, procedure) (sections run every step)."""
        key = (session_id, int(procedure.id))
        if key in self._notified:
            return
        self._notified[key] = None
        while len(self._notified) > NOTIFIED_KEPT:
            self._notified.pop(next(iter(self._notified)))
        self.skipped = [*self.skipped[-31:], (int(procedure.id), tuple(missing))]
        self._notices.setdefault(session_id, []).append(
            f"procedure p{procedure.id} was not offered: it names tools no longer registered ({', '.join(missing[:8])})")
        memory = self.runtime.service(MEMORY_SERVICE)
        memory.metrics.inc(SKIPPED_METRIC, reason="unregistered_tool")
        trace_for = getattr(self.runtime, "trace_for", None)
        if trace_for is not None:
            try:
                trace_for(session_id).record("memory_procedure_skipped", procedureId=int(procedure.id),
                                             reason="unregistered_tool", tools=missing[:8])
            except Exception:
                pass  # a trace that cannot be written never fails the prompt

    def sections(self, session_id: str, user_text: str) -> list[Any]:
        from atomic_agent.api import PromptSection, capped_lines, estimate_tokens

        found = self.usable(self.store().recall(user_text, self.cfg.recall_k * 2), session_id)[: self.cfg.recall_k]
        if not found:
            return []
        body = capped_lines([procedure_pointer(p) for p in found], self.cfg.max_tokens, estimate_tokens)
        return [PromptSection(HEADING, body, slot="recall", max_tokens=self.cfg.max_tokens, dedupe_key=HEADING,
                              source="procedure templates")]

    def turn_notices(self, session_id: str, turn_index: int) -> list[str]:
        """The skip notices this session's turn raised, for the person (never the model)."""
        return self._notices.pop(session_id, [])

    async def after_turn(self, digest: Any) -> None:
        memory = self.runtime.service(MEMORY_SERVICE)
        entries = self.runtime.sessions.entries(digest.session_id)
        if digest.turn_index > 0 and memory.corrects(digest.user_text):
            # the previous turn's reply was wrong: what it did is no procedure
            self.store().forget_run(digest.session_id, digest.turn_index - 1, "corrected")
            self._ran(memory, digest.turn_index - 1, "corrected")
        if digest.reason not in ("reply", "finish"):
            return  # only a turn that succeeded teaches how
        steps = turn_steps(entries, digest.turn_index)
        if len(steps) < 2:
            return
        if had_tool_error(entries, digest.turn_index):
            self._ran(memory, digest.turn_index, "tool_error")
            return
        trouble = memory.assess_turn(entries, digest.session_id, digest.turn_index)
        if trouble is not None and trouble.kind == "failed":
            self._ran(memory, digest.turn_index, "failed")
            return
        made = self.store().record_run(digest.session_id, digest.turn_index, digest.user_text, steps)
        self._ran(memory, digest.turn_index, "recorded")
        if made is not None:
            self.created = [*self.created[-31:], made.id]

    def _ran(self, memory: Any, turn_index: int, outcome: str) -> None:
        self.runs = [*self.runs[-31:], (turn_index, outcome)]
        memory.metrics.inc(MINED_METRIC, outcome=outcome)


def procedures_phase(runtime: RuntimeView, cfg: Any) -> MemoryPhase:
    from atomic_agent.api import MemoryPhase

    miner = ProcedureMiner(runtime, cfg)
    return MemoryPhase(name="memory-procedures", order=PHASE_ORDER, sections=miner.sections,
                       after_turn=miner.after_turn, turn_notices=miner.turn_notices)


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
            found = store.recall(query, cfg.recall_k * 2)
        except memory.StoreError as exc:
            return ToolResult.error(str(exc), errorType=type(exc).__name__)
        hits = [p for p in found if not missing_tools(p, registered)][: cfg.recall_k]
        notices = [f"p{p.id} skipped: it names tools no longer registered ({', '.join(missing_tools(p, registered))})"
                   for p in found if missing_tools(p, registered)]
        if notices:
            memory.metrics.inc(SKIPPED_METRIC, len(notices), reason="unregistered_tool")
        if not hits:
            return ToolResult.ok("\n".join([f"no procedure matches {query[:80]!r}", *notices]), procedures=[])
        return ToolResult.ok("\n".join([*(procedure_text(p, registered) for p in hits), *notices]),
                             procedures=[p.to_json() for p in hits])

    return [ToolSpec("memory.procedures.recall", "Read a procedure template's steps (advice, never run for you), "
                     "by id from ### procedures or by query.", RECALL_SCHEMA, ResourceClass.PURE_READ, recall,
                     tier=Tier.RARE, durable=True)]
