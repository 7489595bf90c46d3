"""Everything one step needs, passed explicitly (no globals)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import attrs

from atomic_agent.agent.agent_events import EventSink
from atomic_agent.agent.loop_detector import ToolLoopTracker
from atomic_agent.approval.approval_gate import ApprovalGate
from atomic_agent.config.core_blocks import AgentConfig
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.llm.provider_protocol import TextProvider
from atomic_agent.records.memory_phase import PromptSection
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tracing.trace_recorder import TraceRecorder


@attrs.define
class StepContext:
    provider: TextProvider
    profile: ModelProfile
    registry: ToolRegistry
    gate: ApprovalGate
    session: SessionState
    store: SessionRepository
    tracker: ToolLoopTracker
    trace: TraceRecorder
    emit: EventSink
    agent: AgentConfig
    prompt_env: Any
    stable_prefix: str
    prefix_hash: str
    grammar: str | None
    slot_id: int
    n_ctx: int | None
    n_predict: int
    turn_index: int
    step: int
    cancelled: asyncio.Event
    memory_sections: Sequence[PromptSection] = ()
    notices: Sequence[str] = ()
    services: dict[str, Any] = attrs.field(factory=dict)
    temperature: float = 0.2
    seed: int | None = None
