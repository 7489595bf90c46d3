"""`Runtime.settle_interrupted` and the durable re-runner it needs (issue 5, durable calls).

Settling happens between turns: it is submitted to the TurnController like a turn, so it
never races the session's running turn, and a durable call runs again through the same
approval gate as any call (rerun_durable_call).
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.settle_interrupted_calls import RunDurable, SettleReport, settle_interrupted_calls

if TYPE_CHECKING:
    from atomic_agent.runtime.runtime import Runtime


def durable_runner(runtime: Runtime, session: SessionState) -> RunDurable:
    """The `run_durable` settle_interrupted_calls needs: a durable call runs again through the gate."""
    from atomic_agent.agent.rerun_durable_call import rerun_durable_call

    return partial(rerun_durable_call, registry=runtime.registry, gate=runtime.gate, agent=runtime.config.agent,
                   session=session, state_dir=runtime.state_dir, services=runtime._services)


async def settle_interrupted(runtime: Runtime, session_id: str) -> SettleReport:
    """Settle the calls a crash left open on the session, between turns (TurnController)."""
    async def settle() -> SettleReport:
        session = runtime.sessions.load(session_id)
        return await settle_interrupted_calls(runtime.sessions, session, runtime.registry,
                                              runtime.durable_runner(session))

    return await runtime.turns.submit(session_id, settle, origin="cli")
