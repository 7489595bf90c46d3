"""What hooks and plugin services receive as `runtime`: the whole face of the runtime a plugin
may use, and nothing else.

It lists what the plugins really use: the config and state dir, shared services, the
approval gate, the tool registry, the sessions, the text provider, and the turns — run,
steer, stop, look up, recover — plus what a long-running host (serve, the sidecar, a
channel's foreground process) needs to stop gracefully. Plugins read through it and call
its methods; they assign nothing on it (the runtime offers a method for each change it
allows, such as `set_tracing`). `tests/runtime/test_runtime_view.py` checks that the
concrete `Runtime` has every member and that no plugin reaches past this list or assigns
on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:  # types only: importing this module stays as cheap as `--help` needs
    from atomic_agent.agent.agent_events import EventSink
    from atomic_agent.agent.agent_loop import TurnResult
    from atomic_agent.approval.approval_gate import ApprovalGate
    from atomic_agent.config.app_config import AppConfig
    from atomic_agent.hook_records import ConfigBlock
    from atomic_agent.llm.provider_protocol import TextProvider
    from atomic_agent.providers.provider_registry import ProviderRegistry
    from atomic_agent.runtime.prompt_plan import PromptPlan, PromptPreview
    from atomic_agent.sessions.compact_session import CompactionResult
    from atomic_agent.sessions.session_database import SessionRepository
    from atomic_agent.sessions.session_state import SessionState
    from atomic_agent.tools.tool_registry import ToolRegistry
    from atomic_agent.tracing.trace_recorder import TraceRecorder
    from atomic_agent.turns.graceful_stop import DrainReport
    from atomic_agent.turns.request_keys import KeyedTurn, RequestKey
    from atomic_agent.turns.restart_recovery import RecoveryReport
    from atomic_agent.turns.steering_inbox import SteerOutcome
    from atomic_agent.turns.turn_answers import TurnAnswer
    from atomic_agent.turns.turn_controller import TurnController


@runtime_checkable
class RuntimeView(Protocol):
    """The runtime as a plugin sees it during registration, lifecycle hooks and from its services."""

    # -- what it was started with ---------------------------------------------------------
    @property
    def config(self) -> AppConfig:
        """The loaded config (file values, defaults and environment overrides)."""
        ...

    @property
    def config_blocks(self) -> Mapping[str, ConfigBlock]:
        """Every registered config block by key (what validates a change to config.json)."""
        ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def environ(self) -> Mapping[str, str]:
        """The environment the runtime was given: where keys named in config are read, and
        the source of a tool's filtered child environment."""
        ...

    def service(self, name: str, default: Any = ...) -> Any:
        """A shared service by name (e.g. "sessions", "approval_gate", or one a plugin
        provides through `register_services`). When it cannot be had (no provider, two
        providers, a failed factory): `default` if one was given (None included), else
        ServiceUnavailableError (ServiceConflictError for two providers)."""
        ...

    def services(self, name: str) -> list[Any]:
        """Every provider's service of a sink-style name (`ServiceSpec(multiple=True)`), by
        plugin name; empty when no plugin provides it."""
        ...

    def set_tracing(self, enabled: bool) -> None:
        """Turn per-session traces on or off for turns from now on (config.json unchanged)."""
        ...

    # -- the long-lived pieces ------------------------------------------------------------
    @property
    def gate(self) -> ApprovalGate:
        """The approval gate: its level, `set_level`, the audit log."""
        ...

    @property
    def registry(self) -> ToolRegistry:
        """Every registered tool (filled by `register_tools`; complete from `runtime_started` on)."""
        ...

    @property
    def sessions(self) -> SessionRepository: ...

    @property
    def provider(self) -> TextProvider:
        """The text provider every turn uses (the fallback chain of the `llm` config)."""
        ...

    def build_provider_registry(self) -> ProviderRegistry:
        """A fresh registry of the configured providers, owned (and closed) by the caller."""
        ...

    async def prompt_plan(self, refresh: bool = False) -> PromptPlan:
        """The current plan of a step: the model profile, grammar, context size, template env."""
        ...

    async def preview_prompt(self, session_id: str | None = None, message: str | None = None,
                             working_dir: Path | None = None) -> PromptPreview:
        """The prompt the next turn of `session_id` (or of a new session) would send after
        `message`, by section with token counts (estimated when the backend cannot count)."""
        ...

    def set_approval_level(self, level: object) -> int:
        """Save `level` (1..5, else ValueError) to config.json, then apply it to the running gate.
        ApprovalLevelError when it was saved but not applied; ConfigError or OSError when the
        file could not be written (the level is unchanged)."""
        ...

    def trace_for(self, session_id: str) -> TraceRecorder:
        """The session's trace recorder (records nothing while tracing is off)."""
        ...

    @property
    def turns(self) -> TurnController:
        """Which sessions have a turn running or waiting in this process (`is_busy`)."""
        ...

    # -- turns ----------------------------------------------------------------------------
    def open_session(self, session_id: str | None, working_dir: Path | None = None) -> SessionState: ...

    async def run_turn(self, text: str, session_id: str | None = None, on_event: EventSink | None = None,
                       working_dir: Path | None = None, cancelled: asyncio.Event | None = None,
                       origin: str = "cli", tool_choice: str | None = None,
                       resend_steer_id: str | None = None, request_key: RequestKey | None = None) -> TurnResult: ...

    def steer(self, session_id: str, text: str, request_key: RequestKey | None = None) -> SteerOutcome: ...

    def dismiss_steer(self, steer_id: str) -> bool: ...

    def stop(self, session_id: str, turn_id: str | None = None) -> bool: ...

    def running_turn_id(self, session_id: str) -> str | None:
        """The id of the turn running on the session's lane in this process, if any."""
        ...

    def turn_for_key(self, key: str) -> KeyedTurn | None: ...

    def answer_of(self, turn_id: str) -> TurnAnswer: ...

    async def compact(self, session_id: str) -> CompactionResult: ...

    # -- a host's start and stop ----------------------------------------------------------
    async def recover(self, resume: bool = False, on_event: EventSink | None = None) -> RecoveryReport: ...

    async def drain(self, grace_s: float = ...) -> DrainReport: ...

    @property
    def stopping(self) -> bool:
        """Whether a drain began (nothing new is admitted)."""
        ...

    def park_now(self) -> int:
        """End a drain's grace period: every running turn parks at once (its step abandoned);
        how many were asked."""
        ...

    def channel_status(self) -> dict[str, dict[str, Any]]:
        """Each registered channel: running (with its own status), failed (with the error) or stopped."""
        ...

    async def close(self) -> None: ...
