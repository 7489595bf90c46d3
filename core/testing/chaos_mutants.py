"""Deliberate bugs for proving the chaos suite catches what it claims (tests/chaos/test_mutants.py).

Off unless `ATOMIC_AGENT_CHAOS_MUTANT` names one; product code consults `mutant_on` at
exactly one point per mutant and otherwise behaves as written. Never set it outside tests.

- `ack_before_commit`: admission tells the caller the turn is queued, then commits it.
- `rerun_non_durable`: recovery runs an interrupted non-durable call again.
- `split_claim`: steer consumption records the messages in one transaction and deletes
  them from the queue in another.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Sequence
from typing import Any

ENV = "ATOMIC_AGENT_CHAOS_MUTANT"
MUTANTS = ("ack_before_commit", "rerun_non_durable", "split_claim")


def mutant_on(name: str) -> bool:
    return os.environ.get(ENV, "") == name


async def ack_before_commit(lifecycle: Any, text: str, session_id: str, origin: str, sink: Any, cancelled: Any,
                            execute: Any) -> Any:
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
    texts: list[str] = queue.peek(steer_ids)
    if texts:
        with queue.store.write():
            record(texts)
        with queue.store.write() as handle:  # the bug: a crash between these two leaves the steer in both places
            queue.claim(handle, steer_ids)
    return texts
