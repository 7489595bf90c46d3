"""The body of one started turn: memory phases around the agent loop, and what each step sees.

`execute_turn` is what the TurnLifecycle runs once the ledger has started the turn (the
opening transcript rows are already written under the turn's writer generation): every
write of the turn goes through a store fenced by that generation, and each step gets a
StepContext built from the current prompt plan. A transport or grammar failure drops the
plan (the server may have restarted with another n_ctx or template).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnDeps, TurnResult, run_turn
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.agent.step_context import StepContext
from atomic_agent.runtime.session_provider import LazyProvider, session_provider
from atomic_agent.runtime.tool_choice import step_grammar
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import USER
from atomic_agent.turns.running_turn import TurnStops
from atomic_agent.turns.turn_lifecycle import FinalizeTurn
from atomic_agent.turns.turn_states import StartedTurn

if TYPE_CHECKING:
    from atomic_agent.runtime.runtime import Runtime


async def execute_turn(runtime: Runtime, text: str, session: SessionState, started: StartedTurn,
                       stops: TurnStops, finalize: FinalizeTurn, tool_choice: str | None = None) -> TurnResult:
    cancel = stops.cancel
    emit: ev.EventSink = lambda e: runtime.turns.emit(session.id, e)  # noqa: E731
    # a continuation (no text of its own) answers the conversation's latest message: memory reads that
    focus = text or next((e.text for e in reversed(session.entries) if e.kind == USER), "")
    turn_start = runtime._before_turn(session, started.turn_index, focus)  # the opening rows are already written
    await runtime._prepare_turn(turn_start)
    trace = runtime.trace_for(session.id)
    store = runtime.sessions.fenced(started.guard)  # every write of this turn carries its generation
    deps = TurnDeps(session, store, trace, LazyProvider(runtime), cancel, runtime.inbox, turn_id=started.turn_id,
                    opened_turn_index=started.turn_index, finalize=finalize,
                    steer_mode=runtime.config.agent.steer_mode, park=stops.park)
    agent = runtime.config.agent
    slot: list[int] = []

    async def make_context(turn_index: int, step: int, notices: Sequence[str]) -> StepContext:
        plan = await runtime.prompt_plan()
        prefix = plan.stable_prefix_for(session.working_dir)
        if not slot:
            slot.append(runtime.provider.slot_for(session.id))
        return StepContext(
            provider=session_provider(runtime, session.id, emit, trace, turn_index), profile=plan.profile,
            registry=runtime.registry, gate=runtime.gate,
            session=session, store=store, tracker=ToolLoopTracker(), trace=trace, emit=emit,
            agent=agent, prompt_env=plan.env, stable_prefix=prefix,
            prefix_hash=runtime.prefix_hash(plan.profile.frame_stable_prefix(prefix)),
            grammar=step_grammar(plan.grammar, plan.profile, step, tool_choice, agent.max_parallel_tool_calls,
                                 plan.registry),
            slot_id=slot[0], n_ctx=plan.n_ctx, n_predict=plan.n_predict, turn_index=turn_index, step=step,
            cancelled=cancel, memory_sections=runtime.memory_sections(session.id, focus), notices=notices,
            services=runtime._services, temperature=plan.temperature, seed=plan.seed)

    result = await run_turn(make_context=make_context, base=deps, text=text, max_steps=agent.max_steps, emit=emit)
    if result.status == "failed" and result.category in ("transport", "grammar"):
        await runtime.forget_plan()
    runtime._after_turn(session, result, focus)
    return result
