"""Deliberate bugs for proving the chaos suite catches what it claims (test_mutants.py).

Product code knows nothing of them: `inject_mutant` patches one method or function of the
turn lifecycle for the duration of a test (through pytest's monkeypatch), so the rest of
the code runs as written.

- `ack_before_commit`: admission tells the caller the turn is queued, then commits it.
- `rerun_non_durable`: recovery runs an interrupted non-durable call again before settling.
- `split_claim`: steer consumption records the messages in one transaction and deletes
  them from the queue in another.

For the approval kill tier (test_approval_kills.py), kept apart from MUTANTS (the other
tiers run no gated calls):

- `interrupt_parked`: recovery never parks a turn waiting on an approval; it interrupts it.
- `reuse_approval`: an approval is not consumed once (its call may run on every resume),
  and a call whose approval was already used still counts as parked.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from typing import Any

import pytest

MUTANTS = ("ack_before_commit", "rerun_non_durable", "split_claim")
APPROVAL_MUTANTS = ("interrupt_parked", "reuse_approval")


async def ack_before_commit(lifecycle: Any, text: str, session_id: str, origin: str, sink: Any, cancelled: Any,
                            execute: Any, resend_steer_id: str | None = None, request_key: Any = None) -> Any:
    from atomic_agent.agent import agent_events as ev

    turn_id = uuid.uuid4().hex
    sink(ev.event(ev.TURN_QUEUED, sessionId=session_id, turnId=turn_id, position=0, origin=origin))  # the bug
    ticket = lifecycle.ledger.admit(session_id, text, origin, turn_id=turn_id)
    return await lifecycle.run_admitted(ticket, sink, cancelled, execute)


async def rerun_non_durable(runtime: Any, session_id: str) -> None:
    """Run every unanswered non-durable call of the session again (the bug); answering them
    is left to the settling that follows."""
    from atomic_agent.sessions.unanswered_calls import unanswered_calls
    from atomic_agent.testing.tool_context_kit import make_tool_context

    for call in unanswered_calls(runtime.sessions.entries(session_id)):
        spec = runtime.registry.get(call.tool or "")
        if spec is not None and not spec.durable:
            await spec.run(call.args or {}, make_tool_context(runtime.state_dir, session_id=session_id))


def split_claim(queue: Any, steer_ids: Sequence[int], record: Callable[[list[str]], object]) -> list[str]:
    if not steer_ids:
        return []
    texts: list[str] = queue.peek(steer_ids)
    if texts:
        with queue.store.write():
            record(texts)
        with queue.store.write() as handle:  # the bug: a crash between these two leaves the steer in both places
            queue.claim(handle, steer_ids)
    return texts


def inject_mutant(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Switch `name` on until the test ends."""
    if name == "ack_before_commit":
        from atomic_agent.turns.turn_lifecycle import TurnLifecycle

        monkeypatch.setattr(TurnLifecycle, "run", ack_before_commit)
    elif name == "split_claim":
        from atomic_agent.turns.durable_steering import SteerQueue

        monkeypatch.setattr(SteerQueue, "consume", split_claim)
    elif name == "rerun_non_durable":
        from atomic_agent.turns import restart_recovery

        settle = restart_recovery._settle_calls

        async def rerun_then_settle(runtime: Any, session_id: str) -> int:
            await rerun_non_durable(runtime, session_id)
            return await settle(runtime, session_id)

        monkeypatch.setattr(restart_recovery, "_settle_calls", rerun_then_settle)
    elif name == "interrupt_parked":
        from atomic_agent.turns import restart_recovery

        monkeypatch.setattr(restart_recovery, "approvals_waited_on", lambda _services, _turn: [])
    elif name == "reuse_approval":
        from atomic_agent.approval.approval_records import CANCELLED, ApprovalRecords

        monkeypatch.setattr(ApprovalRecords, "consume", lambda self, approval_id: True)
        monkeypatch.setattr(ApprovalRecords, "parks",
                            lambda self, key: any(r.state != CANCELLED for r in self.for_call(key)))
        from atomic_agent.turns import restart_recovery

        def waited_on(services: Any, turn: Any) -> list[str]:
            records = services.gate.records
            if records is None or turn.turn_index is None:
                return []
            return [r.id for r in records.find() if r.session_id == turn.session_id
                    and r.turn_id == str(turn.turn_index) and r.state != CANCELLED]

        monkeypatch.setattr(restart_recovery, "approvals_waited_on", waited_on)
    else:
        raise ValueError(f"unknown mutant {name!r}; known: {', '.join((*MUTANTS, *APPROVAL_MUTANTS))}")
