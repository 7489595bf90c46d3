"""The composed runtime: tools, approval gate, memory phases, provider, sessions, traces.

`create_runtime()` is the one way to get one; every entry point (CLI, sidecar, HTTP,
channels) goes through `Runtime.run_turn`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.agent import agent_events as ev
from atomic_agent.agent.agent_loop import TurnResult
from atomic_agent.approval.approval_gate import (
    ApprovalGate,
    AskHost,
    resolve_boot_level,
    set_approval_level,
)
from atomic_agent.approval.approval_repository import BackendApprovalAudit, BackendApprovals
from atomic_agent.config.app_config import AppConfig
from atomic_agent.config.state_dir import resolve_cache_dir
from atomic_agent.hook_records import (
    ApprovalCategory,
    ChannelSpec,
    ConfigBlock,
    MemoryPhase,
    PromptSection,
    ProviderKind,
    TickSpec,
    ToolSpec,
)
from atomic_agent.llm.model_profile import PLAIN_TEXT_PROFILE, ModelProfile
from atomic_agent.plugin_host.collect_registrations import await_lifecycle, call_lifecycle, collect_records
from atomic_agent.plugin_host.plugin_host import PluginHost
from atomic_agent.plugin_host.service_registry import (
    NO_DEFAULT,
    ServiceConflictError,
    ServiceNotFoundError,
    ServiceRegistry,
    ServiceUnavailableError,
)
from atomic_agent.prompt.build_stable_prefix import SKILLS_SERVICE
from atomic_agent.prompt.prompt_assets import PromptAssets
from atomic_agent.prompt.prompt_style import resolve_prompt_style
from atomic_agent.providers.fallback_provider import FallbackTextProvider, RequestShaper
from atomic_agent.providers.llm_config import read_llm_config
from atomic_agent.providers.provider_registry import ProviderRegistry
from atomic_agent.runtime.background_work import ChannelRunner, PluginTicks
from atomic_agent.runtime.boot_context import BootContext
from atomic_agent.runtime.memory_phases import CONSOLIDATION_TICK, MemoryPhases
from atomic_agent.runtime.prompt_plan import (
    PromptPlan,
    PromptPreview,
    grammar_for,
    plan_prompt,
    preview_prompt,
    profile_from_facts,
    with_current_tools,
)
from atomic_agent.runtime.session_compactor import SessionCompactor
from atomic_agent.sessions.compact_session import CompactionResult
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.settle_interrupted_calls import RunDurable, SettleReport
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tracing.prefix_hash import hash_prefix, load_or_create_salt
from atomic_agent.tracing.trace_events import TRACE_FORMAT
from atomic_agent.tracing.trace_recorder import TraceRecorder, TraceRecorders
from atomic_agent.turns import session_backend_kit
from atomic_agent.turns.admissible_text import check_text
from atomic_agent.turns.graceful_stop import DEFAULT_GRACE_S, DrainReport, drain
from atomic_agent.turns.parked_turn_resumer import ParkedTurnResumer
from atomic_agent.turns.request_keys import KeyedTurn, RequestKey
from atomic_agent.turns.restart_recovery import durable_runner, settle_interrupted
from atomic_agent.turns.session_backend_kit import SESSION_BACKEND_KIT_SERVICE
from atomic_agent.turns.session_backends import DEFAULT_BACKEND, SESSION_BACKEND_SERVICE, SessionBackend
from atomic_agent.turns.steering_inbox import SteeringInbox, SteerOutcome
from atomic_agent.turns.turn_answers import TurnAnswer, answer_of
from atomic_agent.turns.turn_controller import TurnController
from atomic_agent.turns.turn_execution import TurnServices, check_tool_choice
from atomic_agent.turns.turn_lifecycle import TurnLifecycle

if TYPE_CHECKING:
    from atomic_agent.turns.restart_recovery import RecoveryReport


class Runtime:
    """Owns the long-lived pieces; `run_turn` is the only path into the agent loop."""

    def __init__(self, boot: BootContext, provider: Any = None, ask: AskHost | None = None,
                 environ: dict[str, str] | None = None) -> None:
        self.boot = boot
        self.host: PluginHost = boot.host
        self.environ = dict(os.environ if environ is None else environ)
        # the services every registration hook may ask for exist before the first one runs;
        # only tool_registry waits for register_tools (see hookspecs)
        self.prompt_assets = PromptAssets.for_host(boot.state_dir, self.host, resolve_cache_dir(self.environ))
        self._services: dict[str, Any] = {"state_dir": boot.state_dir, "prompt_assets": self.prompt_assets,
                                          SESSION_BACKEND_KIT_SERVICE: session_backend_kit}
        self.plugin_services = ServiceRegistry(self.host)
        categories = collect_records(self.host, "register_approval_categories", ApprovalCategory)
        # approvals are durable records every surface answers, and a restart resumes
        # (the session backend's: the state dir's files, or the fleet's database), opened on first use
        self.gate = ApprovalGate(categories, self.config.agent.approval_level, ask,
                                 audit=BackendApprovalAudit(lambda: self.session_backend.approval_audit(self.state_dir)),
                                 records=BackendApprovals(lambda: self.session_backend.approvals(self.state_dir)))
        self.turns = TurnController()
        self._services.update({"approval_gate": self.gate, "turn_controller": self.turns})
        self.registry = ToolRegistry(collect_records(self.host, "register_tools", ToolSpec, runtime=self))
        self._services["tool_registry"] = self.registry
        self.memory = MemoryPhases(collect_records(self.host, "register_memory_phases", MemoryPhase, runtime=self))
        self.memory_phases = self.memory.phases
        self.channels = ChannelRunner(self.host, collect_records(self.host, "register_channels", ChannelSpec,
                                                                 runtime=self))
        ticks = collect_records(self.host, "register_ticks", TickSpec, runtime=self)
        interval = self.config.agent.consolidation_interval_s
        if interval > 0 and self.memory.consolidate_any:  # the memory phases' cold path, on the same timers
            ticks.append(TickSpec(CONSOLIDATION_TICK, interval, self.memory.consolidate,
                                  summary="memory phases' consolidate()", plugin="core"))
        self.ticks = PluginTicks(ticks)
        self._provider = provider
        self._session_backend: SessionBackend | None = None  # where sessions, turns and steers live
        self._sessions: SessionRepository | None = None
        self._lifecycle: TurnLifecycle | None = None
        self._plan: PromptPlan | None = None
        self._planning: asyncio.Future[PromptPlan] | None = None
        self._salt: str | None = None
        self._traces = TraceRecorders(boot.state_dir, lambda: self.config.tracing)
        self._started = False
        self.inbox = SteeringInbox()
        self.compactor = SessionCompactor(self)  # one shared compaction per session
        self._turn_services: TurnServices | None = None
        self.prompt_date: date | None = None  # the date prompts show; None is today (a replay pins the recorded one)

    async def start(self, serving: bool = True) -> None:
        """Await the work `runtime_started` implementations handed back (e.g. connecting MCP
        servers, whose tools must be in the first prompt), then, when `serving`, start what
        runs beside the turns: the channels and the ticks (the plugins' and consolidation). A
        one-shot command passes serving=False: it must not poll a channel another process
        owns or fire scheduled work. `create_runtime` calls it, and so does the first
        `run_turn` of a runtime nobody started (serving=False); calling it again does nothing."""
        if self._started:
            return
        self._started = True
        await await_lifecycle(self.host, "runtime_started", call_lifecycle(self.host, "runtime_started", runtime=self))
        if not serving:
            return
        await self.channels.start_all(self)
        self.ticks.start()

    async def run_tick(self, name: str) -> bool:
        """Run the plugin tick `name` once now (after the one in progress); False when it raised."""
        return await self.ticks.run_once(name)

    async def consolidate_now(self) -> dict[str, str]:
        """Run one consolidation now (after the one in progress, if any); each phase's outcome."""
        return await self.memory.consolidate()

    # -- RuntimeView ----------------------------------------------------------------------
    @property
    def config(self) -> AppConfig:
        return self.boot.config

    @property
    def config_blocks(self) -> Mapping[str, ConfigBlock]:
        return self.boot.config_blocks

    def set_tracing(self, enabled: bool) -> None:
        """Turn per-session traces on or off for turns from now on (config.json unchanged)."""
        config = self.config
        self.boot.config = config.with_block("tracing", attrs.evolve(config.tracing, enabled=enabled))

    @property
    def state_dir(self) -> Path:
        return self.boot.state_dir

    def service(self, name: str, default: Any = NO_DEFAULT) -> Any:
        """A core service (state_dir, prompt_assets, approval_gate, turn_controller, sessions,
        tool_registry, session_backend_kit) or one a plugin provides (built on first use). Without `default`,
        ServiceNotFoundError when none is, ServiceConflictError when two plugins provide it,
        ServiceUnavailableError (the base of both) when its factory failed; with one, that
        default instead of any of them."""
        if name in self._services:
            return self._services[name]
        if name == "sessions":
            return self.sessions
        try:
            return self.plugin_services.get(name, self)
        except ServiceUnavailableError:
            if default is NO_DEFAULT:
                raise
            return default

    def services(self, name: str) -> list[Any]:
        """Every plugin's service of a sink-style name (`ServiceSpec(multiple=True)`), by plugin
        name; empty when none provides it. Providers whose factory failed are left out."""
        return self.plugin_services.get_all(name, self)

    # -- lazily built pieces ----------------------------------------------------------------
    @property
    def provider(self) -> Any:
        if self._provider is None:
            self._provider = self._build_provider()
        return self._provider

    def _build_provider(self) -> FallbackTextProvider:
        """The text provider: the registry (the plugins' kinds and the `llm` entries) behind
        the fallback seam, with each request shaped by the current tools and grammar. With no
        `llm` block in config.json the registry synthesises one entry of the default local kind
        (registered so by its plugin): a local-only install needs no provider configuration.
        The active provider is built right away so a misconfigured entry fails at startup with
        its own message, not inside the first turn."""
        registry = self.build_provider_registry()
        registry.active_text()

        grammars: dict[tuple[ModelProfile, int], str] = {}

        def grammar(link_profile: ModelProfile | None) -> str:
            # the link's own profile when its server answered, else the plan's; rebuilt when tools change
            profile = link_profile or (self._plan.profile if self._plan is not None else None) or PLAIN_TEXT_PROFILE
            key = (profile, self.registry.generation)
            if key not in grammars:
                grammars.clear()
                grammars[key] = grammar_for(self.registry, profile, self.config.agent.max_parallel_tool_calls)
            return grammars[key]

        async def profile_of(link: Any) -> ModelProfile | None:
            facts = await link.describe()
            if facts.get("reachable") is False:
                return None
            return profile_from_facts(facts, self.environ)

        async def style_of(link: Any) -> str | None:
            facts = await link.describe()
            if facts.get("reachable") is False:
                return None
            return resolve_prompt_style(self.config.prompt.style, facts).name

        return FallbackTextProvider(registry, RequestShaper(lambda: tuple(self.registry.specs()), grammar, profile_of,
                                                            style_of))

    def build_provider_registry(self) -> ProviderRegistry:
        """A fresh registry of the configured providers, owned (and closed) by the caller."""
        kinds = {k.name: k for k in collect_records(self.host, "register_providers", ProviderKind)}
        return ProviderRegistry(kinds, read_llm_config(self.config), self)

    async def set_active_provider(self, provider_id: str) -> None:
        """Hot-swap the active text provider (closing the previous one); the next step re-plans."""
        seam = self.provider
        if not hasattr(seam, "registry"):
            raise RuntimeError("this runtime was given a fixed provider; it has no provider registry to swap in")
        await seam.registry.set_active(provider_id)
        self._plan, self._planning = None, None

    @property
    def session_backend(self) -> SessionBackend:
        """SQLite, or the backend a plugin's `session_backend` service chose (storage.url). A
        plugin whose backend cannot be built raises here, and one whose database cannot be
        reached when `sessions` opens the store: either way before any turn is admitted."""
        if self._session_backend is None:
            try:
                provided = self.plugin_services.get(SESSION_BACKEND_SERVICE, self)
            except ServiceConflictError:  # two plugins claim the state: neither is guessed at
                raise
            except ServiceNotFoundError:
                provided = None
            # any other failure (the database the plugin was told to use is unreachable) propagates:
            # nothing is admitted on the wrong store
            self._session_backend = DEFAULT_BACKEND if provided is None else provided
        return self._session_backend

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
                                            lambda: self.config.agent.send_mode, self.turn_services.executor,
                                            self.session_backend)
            self._lifecycle.parked = ParkedTurnResumer(self.turn_services, self._lifecycle)
            self._lifecycle.recover_now = lambda: self.recover(resume=True)
            self.inbox.queue = self._lifecycle.steers
            self.inbox.remember_key = self._lifecycle.ledger.remember_key_in
        return self._lifecycle

    @property
    def turn_services(self) -> TurnServices:
        """What turn execution uses of this runtime, as one explicit record (built with the sessions)."""
        if self._turn_services is None:
            self._turn_services = TurnServices(
                controller=self.turns, sessions=self.sessions, registry=self.registry, gate=self.gate,
                inbox=self.inbox, memory=self.memory, tool_services=self._services, state_dir=self.state_dir,
                config=lambda: self.config, provider=lambda: self.provider, prompt_plan=self.prompt_plan,
                forget_plan=self.forget_plan, trace_for=self.trace_for, prefix_hash=self.prefix_hash,
                today=lambda: self.prompt_date)
        return self._turn_services

    async def prompt_plan(self, refresh: bool = False) -> PromptPlan:
        """Profile, grammar, n_ctx and template env; asks the provider once (server facts).
        Callers share one planning in flight (the one `warm_plan` may have started)."""
        if refresh:
            self._plan, self._planning = None, None
        if self._plan is None:
            if self._planning is None:
                self._planning = asyncio.ensure_future(self._make_plan())
            planning = self._planning
            try:  # shielded: a cancelled turn does not cancel the planning others share
                self._plan = await asyncio.shield(planning)
            finally:
                if self._planning is planning and planning.done():
                    self._planning = None
        elif self._plan.tools_generation != self.registry.generation:  # a live tool group changed
            self._plan = with_current_tools(self._plan)
        return self._plan

    async def _make_plan(self) -> PromptPlan:
        return await plan_prompt(self.provider, self.registry, self.config, self.prompt_assets.env(), self.environ,
                                 skills=self.skill_lines)

    def skill_lines(self) -> tuple[str, ...]:
        """The stable prefix's `### skills` lines: the `catalog_lines()` of the plugin that provides
        the `skills` service, or none (no such plugin, or it failed: reported, and the prompt goes on)."""
        catalog = self.service(SKILLS_SERVICE, None)
        if catalog is None:
            return ()
        try:
            return tuple(str(line) for line in catalog.catalog_lines())
        except Exception as exc:
            print(f"atomic-agent: the skills catalog failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            return ()

    def warm_plan(self) -> None:
        """Start planning now (the server-facts round trip) so it runs while the turn is
        admitted and its opening rows are written, instead of before the first prompt; a
        failure surfaces where the first step awaits the plan."""
        if self._plan is not None or self._planning is not None:
            return
        self._planning = asyncio.ensure_future(self._make_plan())
        self._planning.add_done_callback(lambda t: t.cancelled() or t.exception())  # seen by the step

    async def preview_prompt(self, session_id: str | None = None, message: str | None = None,
                             working_dir: Path | None = None) -> PromptPreview:
        return await preview_prompt(self, session_id, message, working_dir)

    def set_approval_level(self, level: object) -> int:
        return set_approval_level(self.state_dir, self.config_blocks, self.gate, level)

    def trace_for(self, session_id: str) -> TraceRecorder:
        return self._traces.for_session(session_id)

    def prefix_hash(self, framed_prefix: str) -> str:
        if self._salt is None:
            self._salt = load_or_create_salt(self.state_dir)
        return hash_prefix(framed_prefix, self._salt)

    def memory_sections(self, session_id: str, user_text: str) -> list[PromptSection]:
        return self.memory.sections(session_id, user_text)

    # -- turns ------------------------------------------------------------------------------
    def open_session(self, session_id: str | None, working_dir: Path | None = None, *,
                     durable: bool = True) -> SessionState:
        """Load `session_id`, or create a session. `durable=False`: the new session is committed
        but reaches the disk with the next durable commit — for a caller that admits a turn on
        it at once, whose sync covers both (storage.group_commit)."""
        if session_id:
            return self.sessions.load(session_id)
        if durable:
            session = self.sessions.create(working_dir or Path.cwd())
        else:
            from atomic_agent.storage.group_commit import deferred_sync

            with deferred_sync():
                session = self.sessions.create(working_dir or Path.cwd())
        self.trace_for(session.id).record("session_started", workingDir=str(session.working_dir),
                                          traceFormat=TRACE_FORMAT)
        return session

    async def run_turn(self, text: str, session_id: str | None = None, on_event: ev.EventSink | None = None,
                       working_dir: Path | None = None, cancelled: asyncio.Event | None = None,
                       origin: str = "cli", tool_choice: str | None = None,
                       resend_steer_id: str | None = None, request_key: RequestKey | None = None) -> TurnResult:
        """Admit a turn durably, then queue it on the session (FIFO per session, parallel
        across sessions) and run it.

        A new session is created first when `session_id` is None. Events go to `on_event`
        through the session's hook; `turn_queued` (sent only once the admission is on disk)
        carries the turn id and how many turns are ahead of it. `tool_choice` forces the
        first step to call that tool (grammar transport).

        `resend_steer_id` (a `TurnResult.undelivered_ids` entry) sends a handed-back steer as
        this turn: its queued row is deleted in the admission's transaction, and when it is
        already gone SteerAlreadyTakenError is raised with nothing admitted.

        `request_key` (a client's idempotency key) is committed with the admission; a key
        that already admitted a turn raises DuplicateRequestError and admits nothing (the
        caller answers with that turn: `turn_for_key`). Text that is not valid Unicode is
        refused with InvalidTextError before anything (even a new session) is written; after
        a graceful stop began, RuntimeStoppingError. An acknowledged turn the stop left
        queued raises TurnParkedError (the next start answers it); one it interrupted ends
        with status "interrupted".
        """
        check_tool_choice(self.registry, tool_choice)
        check_text(text)
        if not self._started:  # an embedder's Runtime(...) that runs a turn has started: plugins hear of it
            await self.start(serving=False)
        self.warm_plan()
        if session_id is None:  # on disk with the admission's sync, which follows before anyone hears of either
            session_id = self.open_session(None, working_dir, durable=False).id
        lifecycle = self.lifecycle
        return await lifecycle.run(text, session_id, origin, on_event or ev.discard, cancelled,
                                   lifecycle.executor_for(text, tool_choice), resend_steer_id, request_key)

    def turn_for_key(self, key: str) -> KeyedTurn | None:
        """The turn a client's idempotency key admitted (in any process, before a restart too)."""
        return self.lifecycle.ledger.turn_for_key(key)

    def answer_of(self, turn_id: str) -> TurnAnswer:
        """What answers the message of admitted turn `turn_id`, from durable state alone."""
        return answer_of(self.lifecycle.ledger, self.sessions, turn_id)

    async def drain(self, grace_s: float = DEFAULT_GRACE_S) -> DrainReport:
        """A graceful stop (SIGTERM/SIGINT in a host): admit nothing more, let each running turn
        finish its step within `grace_s` and park it (interrupted, answered after the next
        start), leave queued turns queued. Call `close()` afterwards."""
        if self._lifecycle is None:  # nothing ever ran: there is nothing to park
            return DrainReport(0, 0, 0.0)
        return await drain(self._lifecycle, grace_s)

    @property
    def stopping(self) -> bool:
        return self._lifecycle is not None and self._lifecycle.stopping

    def park_now(self) -> int:
        """End a drain's grace period: every running turn parks at once (its step abandoned);
        how many were asked."""
        return 0 if self._lifecycle is None else self._lifecycle.park_all(hard=True)

    def running_turn_id(self, session_id: str) -> str | None:
        """The id of the turn running on the session's lane in this process, if any."""
        return None if self._lifecycle is None else self._lifecycle.running_turn_id(session_id)

    def channel_status(self) -> dict[str, dict[str, Any]]:
        """Each registered channel: running (with its own status), failed (with the error) or stopped."""
        return self.channels.status()

    def dismiss_steer(self, steer_id: str) -> bool:
        """Drop a handed-back steer the caller will not re-send; False when it was already gone."""
        return self.lifecycle.dismiss_steer(steer_id)

    def stop(self, session_id: str, turn_id: str | None = None) -> bool:
        """Stop the turn running on the session's lane (it ends `stopped`); turns queued
        behind it and every other session keep going. False when none is running (or, with
        `turn_id`, when the running turn is not that one). The approvals and questions its
        turn waits on are withdrawn, so no surface offers them for an answer that runs nothing."""
        stopped = self.lifecycle.stop(session_id, turn_id)
        if stopped:
            self.gate.withdraw_waits(session_id, "its turn was stopped")
        return stopped

    async def recover(self, resume: bool = False, on_event: ev.EventSink | None = None) -> RecoveryReport:
        """Settle what a dead process left (idempotent): interrupt its running turns, turn its
        undelivered steers into queued turns, and with `resume` run its queued turns."""
        from atomic_agent.turns.restart_recovery import recover_after_restart

        return await recover_after_restart(self, resume, on_event or ev.discard)

    def steer(self, session_id: str, text: str, request_key: RequestKey | None = None) -> SteerOutcome:
        """Fold `text` into the turn running on the session at its next step boundary.

        Anything but ACCEPTED means nothing was queued: send it as a new turn instead
        (INVALID_TEXT: the text is not valid Unicode and must be fixed first), except
        DUPLICATE: `request_key` already steered or admitted a turn (`turn_for_key` finds it).
        """
        return self.inbox.push(session_id, text, request_key)

    async def forget_plan(self) -> None:
        """Re-plan at the next step and let the provider refresh (its server may have restarted)."""
        self._plan, self._planning = None, None
        refresh = getattr(self._provider, "refresh", None)
        if refresh is not None:
            try:
                await refresh()
            except Exception:
                pass

    # -- durable calls and compaction ------------------------------------------------------
    def durable_runner(self, session: SessionState) -> RunDurable:
        """The `run_durable` settle_interrupted_calls needs: a durable call runs again through the gate."""
        return durable_runner(self.turn_services, session)

    async def settle_interrupted(self, session_id: str) -> SettleReport:
        """Settle the calls a crash left open on the session, between turns (TurnController)."""
        return await settle_interrupted(self.turn_services, session_id)

    async def compact(self, session_id: str) -> CompactionResult:
        """Replace the session's history with a provider-written summary once its running turn
        ends; concurrent callers share one compaction. Raises CompactionError, history untouched."""
        return await self.compactor.compact(session_id)

    async def close(self) -> None:
        # nothing new arrives once the channels and the tick are down
        await self.channels.stop_all()
        await self.ticks.stop()
        self.inbox.clear_all()
        if self._planning is not None and not self._planning.done():
            self._planning.cancel()  # a warm-up no step awaited: done before the provider closes
            await asyncio.gather(self._planning, return_exceptions=True)
        self.compactor.cancel_all()  # no compact() caller waits for ever
        if self._lifecycle is not None:
            await self._lifecycle.close()
        await self.memory.drain()
        if self._started:  # runtime_stopping answers runtime_started; a runtime never started has nothing to stop
            await await_lifecycle(self.host, "runtime_stopping",
                                  call_lifecycle(self.host, "runtime_stopping", runtime=self))
        await self.plugin_services.close()
        if self.gate.records is not None:
            self.gate.records.close()
        if self._provider is not None:
            await self._provider.close()
        if self._lifecycle is not None:
            self._lifecycle.lease.release()
        if self._sessions is not None:
            self._sessions.close()
        self._traces.close_all()


async def create_runtime(state_dir: str | Path | None = None, *, provider: Any = None, ask: AskHost | None = None,
                         boot_context: BootContext | None = None, environ: dict[str, str] | None = None,
                         serving: bool = False, no_approval: bool = False) -> Runtime:
    """A started runtime. `serving=True` for long-running hosts (serve, the sidecar, a
    channel's foreground host): they also run the channels and the ticks. `no_approval=True`
    is `--no-approval`: full trust (level 5) for this process only; config.json keeps its level."""
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.subprocess_env import protect_process

    protect_process()  # before any tool runs: children cannot read this process's environ or memory
    ctx = boot_context or boot(state_dir)
    runtime = Runtime(ctx, provider=provider, ask=ask, environ=environ)
    runtime.gate.set_level(resolve_boot_level(no_approval, runtime.gate.level))
    await runtime.start(serving=serving)
    return runtime
