"""The body of one started turn: memory phases around the agent loop, and what each step sees.

`execute_turn` is what the TurnLifecycle runs once the ledger has started the turn (the
opening transcript rows are already written under the turn's writer generation): every
write of the turn goes through a store fenced by that generation, and each step gets a
StepContext built from the current prompt plan. A transport or grammar failure drops the
plan (the server may have restarted with another n_ctx or template).

Everything a turn reaches of the runtime is in one explicit `TurnServices` record the
runtime builds; the agent loop in turn gets its own dependencies as one `TurnDeps`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import date
from functools import partial
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import FinalizeTurn, TurnDeps, TurnResult, run_turn
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.agent.step_executor import StepContext
from atomic_agent.approval.approval_gate import ApprovalGate
from atomic_agent.config.app_config import AppConfig
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.llm.provider_protocol import slot_affinity
from atomic_agent.prompt.build_grammar import build_tool_call_grammar
from atomic_agent.prompt.conversation_window import ConversationIndex
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import USER
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tracing.trace_events import prompt_sections
from atomic_agent.tracing.trace_recorder import TraceRecorder
from atomic_agent.turns.steering_inbox import SteeringInbox
from atomic_agent.turns.turn_controller import TurnController
from atomic_agent.turns.turn_lifecycle import ExecuteTurn, TurnStops
from atomic_agent.turns.turn_states import StartedTurn

if TYPE_CHECKING:
    from atomic_agent.runtime.memory_phases import MemoryPhases
    from atomic_agent.runtime.prompt_plan import PromptPlan

@attrs.frozen
class TurnServices:
    """What turn execution uses of the runtime, handed over explicitly (built by the runtime
    once its sessions exist). Callables are for what the runtime may rebuild between turns:
    the provider (hot swap), the prompt plan (a restarted server) and the config."""

    controller: TurnController
    sessions: SessionRepository
    registry: ToolRegistry
    gate: ApprovalGate
    inbox: SteeringInbox
    memory: MemoryPhases
    tool_services: Mapping[str, Any]  # what a ToolContext's `services` starts from
    state_dir: Any
    config: Callable[[], AppConfig]
    provider: Callable[[], Any]  # the runtime's provider seam, built on first use
    prompt_plan: Callable[[], Awaitable[PromptPlan]]
    forget_plan: Callable[[], Awaitable[None]]
    trace_for: Callable[[str], TraceRecorder]
    prefix_hash: Callable[[str], str]
    conversations: ConversationIndex = attrs.field(factory=ConversationIndex)  # steps' conversation windows
    today: Callable[[], date | None] = lambda: None  # the date prompts show (None: today); a replay pins it

    def executor(self, text: str, tool_choice: str | None = None) -> ExecuteTurn:
        """What the lifecycle runs for an admitted turn with this text."""
        return partial(execute_turn, self, text, tool_choice=tool_choice)

# `tool_choice`: force the first step of a turn to call one named tool.
#
# The counterpart of OpenAI's `tool_choice: {"function": ...}` for the grammar transport:
# step 0's grammar admits only calls of that tool (one, or a batch when the tool may share one:
# a tool that asks for approval runs alone, so its forced grammar admits exactly one call),
# later steps get the session's normal grammar back. Useful for scripted runs ("read this
# file, then answer") and for
# small local models that otherwise answer straight away. Native-tools providers receive
# the normal request (their own `tool_choice` is a provider setting).

class UnknownToolChoiceError(ValueError):
    pass


def check_tool_choice(registry: ToolRegistry, tool: str | None) -> None:
    """Refuse an unknown name before anything is admitted, naming what exists."""
    if tool is not None and tool not in registry:
        raise UnknownToolChoiceError(
            f"--tool-choice {tool!r} is not a registered tool; `atomic-agent tools list` shows the names")


def step_grammar(plan_grammar: str | None, profile: ModelProfile, step: int, tool: str | None,
                 max_calls: int, registry: ToolRegistry) -> str | None:
    """The grammar for `step`: only `tool` on step 0 (grammar transport only); a tool that
    asks for approval is called once, as the batch rules require."""
    if tool is None or step != 0 or plan_grammar is None:
        return plan_grammar
    return build_tool_call_grammar([tool], profile, max_calls, alone=[tool] if registry.runs_alone(tool) else ())


def session_provider(seam: Any, session_id: str, emit: ev.EventSink, trace: TraceRecorder, turn_index: int) -> Any:
    """The provider seam bound to one session's breaker partition, its event sink and its
    trace (a fixed provider given to the runtime is used as is)."""
    if not hasattr(seam, "for_session"):
        return seam

    def notice(n: Any) -> None:
        emit(n.as_event())
        trace.record("provider_switched", turnIndex=turn_index, direction=n.direction, fromProvider=n.from_id,
                     toProvider=n.to_id, reason=n.reason)

    def usage(provider_id: str, completion: Any) -> None:
        if completion.usage:
            trace.record("llm_usage", turnIndex=turn_index, provider=provider_id, **completion.usage)

    return seam.for_session(session_id, notice, usage)


async def execute_turn(services: TurnServices, text: str, session: SessionState, started: StartedTurn,
                       stops: TurnStops, finalize: FinalizeTurn, tool_choice: str | None = None) -> TurnResult:
    cancel = stops.cancel
    emit: ev.EventSink = lambda e: services.controller.emit(session.id, e)  # noqa: E731
    # a continuation (no text of its own) answers the conversation's latest message: memory reads that
    focus = text or next((e.text for e in reversed(session.entries) if e.kind == USER), "")
    await services.memory.before_turn(session, started.turn_index, focus)  # the opening rows are already written
    trace = services.trace_for(session.id)
    store = services.sessions.fenced(started.guard)  # every write of this turn carries its generation
    agent = services.config().agent
    slot: list[int] = []

    async def make_context(turn_index: int, step: int, notices: Sequence[str]) -> StepContext:
        plan = await services.prompt_plan()
        prefix = plan.stable_prefix_for(session.working_dir)
        seam = services.provider()
        if not slot:
            slots = slot_affinity(seam)
            slot.append(slots.slot_for(session.id) if slots is not None else -1)
        framed = plan.profile.frame_stable_prefix(prefix)
        return StepContext(
            provider=session_provider(seam, session.id, emit, trace, turn_index), profile=plan.profile,
            registry=services.registry, gate=services.gate,
            session=session, store=store, tracker=ToolLoopTracker(), trace=trace, emit=emit,
            agent=agent, prompt_env=plan.env, stable_prefix=prefix,
            prefix_hash=services.prefix_hash(framed),
            prefix_sections=[(name, services.prefix_hash(text)) for name, text in prompt_sections(framed)],
            today=services.today(),
            grammar=step_grammar(plan.grammar, plan.profile, step, tool_choice, agent.max_parallel_tool_calls,
                                 plan.registry),
            slot_id=slot[0], n_ctx=plan.n_ctx, n_predict=plan.n_predict, turn_index=turn_index, step=step,
            cancelled=cancel, memory_sections=services.memory.sections(session.id, focus), notices=notices,
            services=services.tool_services, temperature=plan.temperature, seed=plan.seed,
            conversations=services.conversations, prompt_style=plan.style.name)

    deps = TurnDeps(session, store, trace, services.provider, cancel, make_context, emit, agent.max_steps,
                    inbox=services.inbox, turn_id=started.turn_id, opened_turn_index=started.turn_index,
                    finalize=finalize, steer_mode=agent.steer_mode, park=stops.park,
                    turn_notices=partial(services.memory.turn_notices, session.id))
    result = await run_turn(deps, text)
    if result.status == "failed" and result.category in ("transport", "grammar"):
        await services.forget_plan()
    services.memory.after_turn(session, result, focus)
    return result
