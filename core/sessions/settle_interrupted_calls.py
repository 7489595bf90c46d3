"""Answer every tool call a dead or failed turn left without a result.

Batches are committed before any call runs (tool_journal), so after a crash the
transcript itself says which calls are owed a result. Two ways to settle them:

- `settle_interrupted_calls` is for recovery after a restart. A call to a tool marked
  `durable` (no side effect, or idempotent) is run again through `run_durable`, which the
  runtime supplies so it passes the same approval gate as any call; every other call gets
  an error result saying it was interrupted and deliberately not re-run, because its side
  effect may already have happened. A non-durable tool therefore never runs twice.
- `settle_abandoned_calls` is for a turn that is still alive but giving up (it failed or
  was cancelled): nothing is re-run, each of its open calls gets the given error.

Results land beside their calls in call order (place_tool_results), in one transaction.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import attrs

from atomic_agent.hook_records import ToolResult
from atomic_agent.sessions.place_tool_results import place_tool_results
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TOOL_RESULT, TranscriptEntry
from atomic_agent.sessions.unanswered_calls import is_stranded, unanswered_calls
from atomic_agent.tools.tool_registry import ToolRegistry

RunDurable = Callable[[TranscriptEntry], Awaitable[ToolResult]]
INTERRUPTED = "interrupted"  # details key on a result written for a call a restart cut off


def interrupted_summary(tool: str) -> str:
    return (f"{tool} was interrupted by a restart and was not run again, because its side effects may already "
            "have happened; check the current state before retrying it")


@attrs.frozen
class SettleReport:
    """Seqs of the calls that were re-run and of those answered as interrupted."""

    rerun: tuple[int, ...] = ()
    interrupted: tuple[int, ...] = ()

    @property
    def settled(self) -> int:
        return len(self.rerun) + len(self.interrupted)


def result_row(call: TranscriptEntry, result: ToolResult) -> TranscriptEntry:
    return TranscriptEntry(TOOL_RESULT, call.turn_index, text=result.summary, tool=call.tool, status=result.status,
                           details=dict(result.details), step=call.step, batch_index=call.batch_index)


async def _rerun(call: TranscriptEntry, run_durable: RunDurable) -> ToolResult:
    try:
        return await run_durable(call)
    except Exception as exc:  # the re-run's failure is its answer; the other calls still settle
        return ToolResult.error(f"{call.tool} failed when run again after a restart: {type(exc).__name__}: {exc}",
                                exception=type(exc).__name__)


async def settle_interrupted_calls(store: SessionRepository, session: SessionState, registry: ToolRegistry,
                                   run_durable: RunDurable, parked: Callable[[TranscriptEntry], bool] | None = None,
                                   run_parked: RunDurable | None = None,
                                   unanswered: Callable[[TranscriptEntry], bool] | None = None) -> SettleReport:
    """Settle every unanswered call of `session` after a restart; see the module docstring.

    Calls of a turn the ledger still holds as running are left to it. Only calls at the
    end of the conversation (its own turn's closing note aside) are re-run: a durable call stranded under
    later messages is answered as interrupted too, since its fresh output would describe
    a world the conversation has already moved past. Safe to call on a settled session
    (it does nothing) and to call again after a crash during settling. A parked call whose
    approval is still `unanswered` after its run (the host closed before anyone answered)
    is left open: it is not answered by a shutdown, and the next start resumes it again.
    """
    session.entries = store.entries(session.id)
    running = store.running_turn_indexes(session.id)  # a live owner is still answering those
    calls = [c for c in unanswered_calls(session.entries) if c.turn_index not in running]
    if not calls:
        return SettleReport()
    rerun = [c for c in calls if c.tool is not None and (spec := registry.get(c.tool)) is not None and spec.durable
             and not is_stranded(session.entries, c)]
    # a call parked on a durable approval resumes from its answer: the gate lets its frozen call run once
    resumed = [c for c in calls if c not in rerun and run_parked is not None and parked is not None
               and c.tool is not None and registry.get(c.tool) is not None and parked(c)]
    outcomes = await asyncio.gather(*(_rerun(c, run_durable) for c in rerun),
                                    *(_rerun(c, run_parked) for c in resumed if run_parked is not None))
    ran = rerun + resumed
    answers = dict(zip((c.seq for c in ran), outcomes, strict=True))
    waiting = {c.seq for c in resumed if unanswered is not None and unanswered(c)}
    rows = [result_row(c, answers[c.seq]) if c.seq in answers
            else result_row(c, ToolResult.error(interrupted_summary(c.tool or "the tool"), **{INTERRUPTED: True}))
            for c in calls if c.seq not in waiting]
    if rows:
        place_tool_results(store, session, rows)
    return SettleReport(tuple(c.seq for c in ran if c.seq not in waiting),
                        tuple(c.seq for c in calls if c.seq not in answers))


def settle_abandoned_calls(store: SessionRepository, session: SessionState, turn_index: int, summary: str,
                           status: str = "error") -> int:
    """Give each open call of turn `turn_index` the result `summary` (status error or
    cancelled) without running anything; returns how many were settled."""
    calls = [c for c in unanswered_calls(store.entries(session.id)) if c.turn_index == turn_index]
    if not calls:
        return 0
    return place_tool_results(store, session, [result_row(c, ToolResult(status, summary, {"abandoned": True}))
                                               for c in calls])


def settle_as_interrupted(store: SessionRepository, session: SessionState, turn_index: int) -> int:
    """Answer each open call of turn `turn_index` as interrupted, running nothing (a live owner
    taking over a lane whose dead owner left the turn running); returns how many were settled."""
    calls = [c for c in unanswered_calls(store.entries(session.id)) if c.turn_index == turn_index]
    if not calls:
        return 0
    return place_tool_results(store, session, [
        result_row(c, ToolResult.error(interrupted_summary(c.tool or "the tool"), **{INTERRUPTED: True}))
        for c in calls])
