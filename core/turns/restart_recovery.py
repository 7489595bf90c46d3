"""`Runtime.recover`: what a restarted runtime does before it takes new work.

The ledger part (interrupt, requeue orphaned steers, adopt queued turns) is
`recover_ledger`; this adds what needs the runtime: settling the unanswered tool calls of
each interrupted session (only tools marked durable run again, through the approval gate
like any call) and, with `resume`, running the adopted queued turns in lane order and then
answering what the restart owes (owed_answers): one continuation turn per session whose
last durable record is a consumed message, a tool result or a failure note. A continuation
runs the loop on the durable conversation — the model reads the failure note and the
settled results — so nothing non-durable is ever re-run behind anyone's back.
"""

from __future__ import annotations

import asyncio
import sys
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.settle_interrupted_calls import RunDurable, SettleReport, settle_interrupted_calls
from atomic_agent.turns.graceful_stop import TurnParkedError
from atomic_agent.turns.owed_answers import admit_continuations
from atomic_agent.turns.turn_recovery import recover_ledger
from atomic_agent.turns.turn_states import ticket_of

if TYPE_CHECKING:
    from atomic_agent.runtime.runtime import Runtime
    from atomic_agent.turns.turn_execution import TurnServices


# Settling the calls a crash left open happens between turns: it is submitted to the
# TurnController like a turn, so it never races the session's running turn, and a durable
# call runs again through the same approval gate as any call (invoke_tool).

def durable_runner(services: TurnServices, session: SessionState) -> RunDurable:
    """The `run_durable` settle_interrupted_calls needs: a durable call runs again through the gate."""
    from atomic_agent.agent.invoke_tool import rerun_durable_call

    return partial(rerun_durable_call, registry=services.registry, gate=services.gate, agent=services.config().agent,
                   session=session, state_dir=services.state_dir, services=services.tool_services)


async def settle_interrupted(services: TurnServices, session_id: str) -> SettleReport:
    """Settle the calls a crash left open on the session, between turns (TurnController)."""
    async def settle() -> SettleReport:
        session = services.sessions.load(session_id)
        return await settle_interrupted_calls(services.sessions, session, services.registry,
                                              durable_runner(services, session))

    return await services.controller.submit(session_id, settle, origin="cli")


@attrs.frozen
class RecoveryReport:
    interrupted: tuple[str, ...] = ()  # turn ids now `interrupted` (never re-run)
    steers_requeued: tuple[str, ...] = ()  # ids of queued turns made from undelivered steers
    resumed: tuple[str, ...] = ()  # queued turns submitted again, in lane order
    left_queued: tuple[str, ...] = ()  # queued turns of a dead owner, left for a host that resumes
    settled_calls: int = 0  # unanswered tool calls of interrupted turns given a result
    continued: tuple[str, ...] = ()  # continuation turns admitted for sessions owed an answer
    results: tuple[asyncio.Future[TurnResult], ...] = attrs.field(default=(), eq=False, repr=False)

    def as_dict(self) -> dict[str, Any]:
        return {"interrupted": list(self.interrupted), "steersRequeued": list(self.steers_requeued),
                "resumed": list(self.resumed), "leftQueued": list(self.left_queued),
                "settledCalls": self.settled_calls, "continued": list(self.continued)}


async def recover_after_restart(runtime: Runtime, resume: bool, sink: ev.EventSink) -> RecoveryReport:
    lifecycle = runtime.lifecycle
    found = recover_ledger(lifecycle.ledger, lifecycle.steers, lifecycle.lease.is_alive, resume)
    settled = 0
    # every interrupted turn not yet marked settled, not only those found now: a crash between
    # interrupting a turn and settling its calls must not leave them owed for ever
    for turn in lifecycle.ledger.unsettled_interruptions():
        count = await _settle_calls(runtime, turn.session_id)
        if count >= 0:
            lifecycle.ledger.mark_settled(turn)
            settled += count
    # after settling, so the decision sees the settled results; idempotent (decided from durable state)
    owed = admit_continuations(lifecycle.ledger) if resume else []
    tickets = [ticket_of(turn) for turn in found.resumable] + owed
    # nobody waits on these: what they hand back is requeued and run, never left to a caller
    results = tuple(asyncio.ensure_future(lifecycle.run_for_nobody(ticket, sink, lifecycle.executor_for))
                    for ticket in tickets)
    for future in results:  # a resumed turn reports its own failure; recovery must not crash on it
        future.add_done_callback(_report_failure)
    return RecoveryReport(tuple(t.turn_id for t in found.interrupted), found.steers_requeued,
                          tuple(t.turn_id for t in found.resumable), found.left_queued, settled,
                          tuple(t.turn_id for t in owed), results)


async def _settle_calls(runtime: Runtime, session_id: str) -> int:
    """Settle the session's open calls through the runtime (only durable tools run again)."""
    try:
        return (await runtime.settle_interrupted(session_id)).settled
    except Exception as exc:  # load repairs what settling could not; recovery goes on
        print(f"atomic-agent: could not settle the interrupted calls of session {session_id}: "
              f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return -1


def _report_failure(future: asyncio.Future[TurnResult]) -> None:
    if not future.cancelled() and future.exception() is not None:
        exc = future.exception()
        if isinstance(exc, TurnParkedError):
            return  # a graceful stop left it queued: the next start answers it
        print(f"atomic-agent: a resumed turn failed: {type(exc).__name__}: {exc}", file=sys.stderr)
