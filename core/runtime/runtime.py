"""The composed runtime: tools, approval gate, memory phases, provider, sessions, traces.

`create_runtime()` is the one way to get one; every entry point (CLI, sidecar, HTTP,
channels) goes through `Runtime.run_turn`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.approval.approval_audit import ApprovalAuditLog, audit_path
from atomic_agent.approval.approval_gate import ApprovalGate, AskHost
from atomic_agent.config.app_config import AppConfig
from atomic_agent.plugin_host.collect_registrations import (await_lifecycle, call_lifecycle, collect_records,
                                                            discard_lifecycle)
from atomic_agent.plugin_host.plugin_host import PluginHost
from atomic_agent.records.approval_category import ApprovalCategory
from atomic_agent.metrics.metrics_registry import MetricsRegistry
from atomic_agent.prompt.estimate_tokens import estimate_tokens
from atomic_agent.records.memory_phase import MemoryPhase, PromptSection, TurnStart, fit_sections
from atomic_agent.records.tool_spec import ToolSpec
from atomic_agent.runtime.boot_context import BootContext
from atomic_agent.runtime.prompt_plan import PromptPlan, plan_prompt, with_current_tools
from atomic_agent.runtime.provider_selection import build_runtime_provider
from atomic_agent.runtime.tool_choice import check_tool_choice
from atomic_agent.runtime.turn_execution import execute_turn
from atomic_agent.runtime.steering_inbox import SteerOutcome, SteeringInbox
from atomic_agent.runtime.turn_controller import TurnController
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tracing.prefix_hash import hash_prefix, load_or_create_salt
from atomic_agent.runtime.trace_recorders import TraceRecorders
from atomic_agent.tracing.trace_recorder import TraceRecorder
# durable calls and compaction (issue 5 items 6 and 8)
from atomic_agent.runtime.session_compactor import SessionCompactor
from atomic_agent.sessions.compact_session import CompactionResult
from atomic_agent.runtime.settle_sessions import durable_runner, settle_interrupted
from atomic_agent.sessions.settle_interrupted_calls import RunDurable, SettleReport
from atomic_agent.turns.session_backends import DEFAULT_BACKEND, SessionBackend
from atomic_agent.turns.turn_lifecycle import FinalizeTurn, TurnLifecycle
from atomic_agent.turns.turn_states import StartedTurn

if TYPE_CHECKING:
    from atomic_agent.turns.restart_recovery import RecoveryReport


class Runtime:
    """Owns the long-lived pieces; `run_turn` is the only path into the agent loop."""

    def __init__(self, boot: BootContext, provider: Any = None, ask: AskHost | None = None,
                 environ: dict[str, str] | None = None) -> None:
        self.boot = boot
        self.host: PluginHost = boot.host
        self._services: dict[str, Any] = {"state_dir": boot.state_dir, "metrics": MetricsRegistry()}
        self.environ = dict(os.environ if environ is None else environ)
        self.registry = ToolRegistry(collect_records(self.host, "register_tools", ToolSpec, runtime=self))
        categories = collect_records(self.host, "register_approval_categories", ApprovalCategory)
        self.gate = ApprovalGate(categories, self.config.agent.approval_level, ask,
                                 audit=ApprovalAuditLog(audit_path(boot.state_dir)))
        self.memory_phases = sorted(collect_records(self.host, "register_memory_phases", MemoryPhase, runtime=self),
                                    key=lambda p: (p.order, p.name))
        self._provider = provider
        self.session_backend: SessionBackend = DEFAULT_BACKEND  # where sessions, turns and steers live
        self._sessions: SessionRepository | None = None
        self._lifecycle: TurnLifecycle | None = None
        self._plan: PromptPlan | None = None
        self._salt: str | None = None
        self._traces = TraceRecorders(boot.state_dir, lambda: self.config.tracing)
        self._background: set[asyncio.Task[Any]] = set()
        self.turns = TurnController()
        self.inbox = SteeringInbox()
        self.compactor = SessionCompactor(self)  # issue 5 item 8: one shared compaction per session
        self._services.update({"approval_gate": self.gate, "tool_registry": self.registry,
                               "turn_controller": self.turns})
        self._startup = call_lifecycle(self.host, "runtime_started", runtime=self)

    async def start(self) -> None:
        """Await the work `runtime_started` implementations handed back (e.g. connecting MCP
        servers, whose tools must be registered before the first prompt); `create_runtime`
        calls it. Idempotent."""
        pending, self._startup = self._startup, []
        await await_lifecycle("runtime_started", pending)

    # -- RuntimeView ----------------------------------------------------------------------
    @property
    def config(self) -> AppConfig:
        return self.boot.config

    @property
    def state_dir(self) -> Path:
        return self.boot.state_dir

    def provide_service(self, name: str, value: Any) -> None:
        """Publish a plugin's shared object (e.g. the MCP manager as "mcp") for other plugins
        and hosts to reach through `service(name)`. A name can be provided once."""
        if name in self._services or name in ("sessions", "embeddings"):
            raise ValueError(f"service {name!r} is already provided")
        self._services[name] = value

    def service(self, name: str) -> Any:
        if name == "sessions":
            return self.sessions
        if name == "embeddings":
            return self.embeddings
        return self._services[name]

    @property
    def embeddings(self) -> Any:
        """The `llm.activeEmbeddingProvider` registry, built on first use (memory phases ask for it)."""
        if "embeddings" not in self._services:
            from atomic_agent.embeddings.embedding_registry import EmbeddingRegistry
            from atomic_agent.providers.llm_config_reader import read_llm_config
            from atomic_agent.runtime.provider_selection import provider_kinds

            self._services["embeddings"] = EmbeddingRegistry(provider_kinds(self.host),
                                                             read_llm_config(self.config), self)
        return self._services["embeddings"]

    # -- lazily built pieces ----------------------------------------------------------------
    @property
    def provider(self) -> Any:
        if self._provider is None:
            self._provider = build_runtime_provider(self.host, self,
                                                    lambda: self._plan.profile if self._plan is not None else None)
        return self._provider

    async def set_active_provider(self, provider_id: str) -> None:
        """Hot-swap the active text provider (closing the previous one); the next step re-plans."""
        seam = self.provider
        if not hasattr(seam, "registry"):
            raise RuntimeError("this runtime was given a fixed provider; it has no provider registry to swap in")
        await seam.registry.set_active(provider_id)
        self._plan = None

    @property
    def sessions(self) -> SessionRepository:
        if self._sessions is None:
            self._sessions = self.session_backend.open_store(self.state_dir)
        return self._sessions

    @property
    def lifecycle(self) -> TurnLifecycle:
        """The durable turn ledger, steering queue and per-lane stop (built with the sessions)."""
        if self._lifecycle is None:
            self._lifecycle = TurnLifecycle(self.sessions, self.turns, self.state_dir,
                                            lambda: self.config.agent.send_mode, self._executor,
                                            self.session_backend)
            self.inbox.queue = self._lifecycle.steers
        return self._lifecycle

    async def prompt_plan(self, refresh: bool = False) -> PromptPlan:
        """Profile, grammar, n_ctx and template env; asks the provider once (server facts)."""
        if self._plan is None or refresh:
            self._plan = await plan_prompt(self.provider, self.registry, self.config, self.state_dir, self.environ)
        elif self._plan.tools_generation != self.registry.generation:  # a live tool group changed
            self._plan = with_current_tools(self._plan)
        return self._plan

    def trace_for(self, session_id: str) -> TraceRecorder:
        return self._traces.for_session(session_id)

    def prefix_hash(self, framed_prefix: str) -> str:
        if self._salt is None:
            self._salt = load_or_create_salt(self.state_dir)
        return hash_prefix(framed_prefix, self._salt)

    def memory_sections(self, session_id: str, user_text: str) -> list[PromptSection]:
        sections: list[PromptSection] = []
        for phase in self.memory_phases:
            if phase.sections is not None:
                try:
                    sections.extend(phase.sections(session_id, user_text))
                except Exception as exc:  # a broken memory read path drops its sections, never the turn
                    print(f"atomic-agent: memory phase {phase.name!r} sections failed: {type(exc).__name__}: {exc}",
                          file=sys.stderr)
        return fit_sections(sections, estimate_tokens)

    def _before_turn(self, session: SessionState, turn_index: int, text: str) -> None:
        start = TurnStart(session.id, turn_index, text, str(session.working_dir))
        for phase in self.memory_phases:
            if phase.before_turn is not None:
                try:
                    phase.before_turn(start)
                except Exception as exc:
                    print(f"atomic-agent: memory phase {phase.name!r} before_turn failed: "
                          f"{type(exc).__name__}: {exc}", file=sys.stderr)

    # -- turns ------------------------------------------------------------------------------
    def open_session(self, session_id: str | None, working_dir: Path | None = None) -> SessionState:
        if session_id:
            return self.sessions.load(session_id)
        session = self.sessions.create(working_dir or Path.cwd())
        self.trace_for(session.id).record("session_started", workingDir=str(session.working_dir))
        return session

    async def run_turn(self, text: str, session_id: str | None = None, on_event: ev.EventSink | None = None,
                       working_dir: Path | None = None, cancelled: asyncio.Event | None = None,
                       origin: str = "cli", tool_choice: str | None = None,
                       resend_steer_id: str | None = None) -> TurnResult:
        """Admit a turn durably, then queue it on the session (FIFO per session, parallel
        across sessions) and run it.

        A new session is created first when `session_id` is None. Events go to `on_event`
        through the session's hook; `turn_queued` (sent only once the admission is on disk)
        carries the turn id and how many turns are ahead of it. `tool_choice` forces the
        first step to call that tool (grammar transport).

        `resend_steer_id` (a `TurnResult.undelivered_ids` entry) sends a handed-back steer as
        this turn: its queued row is deleted in the admission's transaction, and when it is
        already gone SteerAlreadyTakenError is raised with nothing admitted.
        """
        check_tool_choice(self.registry, tool_choice)
        if session_id is None:
            session_id = self.open_session(None, working_dir).id
        return await self.lifecycle.run(text, session_id, origin, on_event or ev.discard, cancelled,
                                        self._executor(text, tool_choice), resend_steer_id)

    def dismiss_steer(self, steer_id: str) -> bool:
        """Drop a handed-back steer the caller will not re-send; False when it was already gone."""
        return self.lifecycle.dismiss_steer(steer_id)

    def stop(self, session_id: str, turn_id: str | None = None) -> bool:
        """Stop the turn running on the session's lane (it ends `stopped`); turns queued
        behind it and every other session keep going. False when none is running (or, with
        `turn_id`, when the running turn is not that one)."""
        return self.lifecycle.stop(session_id, turn_id)

    async def recover(self, resume: bool = False, on_event: ev.EventSink | None = None) -> RecoveryReport:
        """Settle what a dead process left (idempotent): interrupt its running turns, turn its
        undelivered steers into queued turns, and with `resume` run its queued turns."""
        from atomic_agent.turns.restart_recovery import recover_after_restart

        return await recover_after_restart(self, resume, on_event or ev.discard)

    def steer(self, session_id: str, text: str) -> SteerOutcome:
        """Fold `text` into the turn running on the session at its next step boundary.

        Anything but ACCEPTED means nothing was queued: send it as a new turn instead.
        """
        return self.inbox.push(session_id, text)

    def _executor(self, text: str, tool_choice: str | None = None) -> Any:
        async def execute(session: SessionState, started: StartedTurn, cancel: asyncio.Event,
                          finalize: FinalizeTurn) -> TurnResult:
            return await self._execute_turn(text, session, started, cancel, finalize, tool_choice)

        return execute

    async def _execute_turn(self, text: str, session: SessionState, started: StartedTurn, cancel: asyncio.Event,
                            finalize: FinalizeTurn, tool_choice: str | None = None) -> TurnResult:
        return await execute_turn(self, text, session, started, cancel, finalize, tool_choice)

    async def forget_plan(self) -> None:
        """Re-plan at the next step and let the provider refresh (its server may have restarted)."""
        self._plan = None
        refresh = getattr(self._provider, "refresh", None)
        if refresh is not None:
            try:
                await refresh()
            except Exception:
                pass

    def _after_turn(self, session: SessionState, result: TurnResult, text: str) -> None:
        from atomic_agent.records.memory_phase import TurnDigest

        digest = TurnDigest(session.id, result.turn_index, text, result.reply)
        for phase in self.memory_phases:
            if phase.after_turn is not None:
                task = asyncio.ensure_future(phase.after_turn(digest))
                self._background.add(task)
                task.add_done_callback(self._background.discard)

    # -- durable calls and compaction (issue 5 items 6 and 8) ------------------------------
    def durable_runner(self, session: SessionState) -> RunDurable:
        """The `run_durable` settle_interrupted_calls needs: a durable call runs again through the gate."""
        return durable_runner(self, session)

    async def settle_interrupted(self, session_id: str) -> SettleReport:
        """Settle the calls a crash left open on the session, between turns (TurnController)."""
        return await settle_interrupted(self, session_id)

    async def compact(self, session_id: str) -> CompactionResult:
        """Replace the session's history with a provider-written summary once its running turn
        ends; concurrent callers share one compaction. Raises CompactionError, history untouched."""
        return await self.compactor.compact(session_id)

    async def close(self) -> None:
        self.inbox.clear_all()
        self.compactor.cancel_all()  # issue 5 item 8: no compact() caller waits for ever
        if self._lifecycle is not None:
            await self._lifecycle.close()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        discard_lifecycle(self._startup)
        self._startup = []
        await await_lifecycle("runtime_stopping", call_lifecycle(self.host, "runtime_stopping", runtime=self))
        try:
            from atomic_agent.metrics.metrics_file import flush_metrics

            flush_metrics(self._services["metrics"], self.state_dir)
        except Exception as exc:  # metrics are observability: never fail shutdown over them
            print(f"atomic-agent: metrics were not saved: {type(exc).__name__}: {exc}", file=sys.stderr)
        if self._provider is not None:
            await self._provider.close()
        if self._lifecycle is not None:
            self._lifecycle.lease.release()
        if self._sessions is not None:
            self._sessions.close()
        self._traces.close_all()


async def create_runtime(state_dir: str | Path | None = None, *, provider: Any = None, ask: AskHost | None = None,
                         boot_context: BootContext | None = None, environ: dict[str, str] | None = None) -> Runtime:
    from atomic_agent.runtime.boot_context import boot

    ctx = boot_context or boot(state_dir)
    runtime = Runtime(ctx, provider=provider, ask=ask, environ=environ)
    await runtime.start()
    return runtime
