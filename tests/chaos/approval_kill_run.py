"""Tier (f): the process dies while approvals are pending.

One seeded run: one or two sessions each send one message; the model answers each by
calling a non-durable side effect that needs approval (category shell, level 1: it always
asks). Its surface shows the request and never answers on its own. Each life but the last
dies — at a random write of sessions.sqlite (FaultPlan, before or after the commit), or
killed outright (its tasks stop, its lease is released, nothing closes) the moment its
approvals are pending. Answers come from "another surface" (the records file, as
`atomic-agent approvals answer` writes it): some while the asking life still waits, some
while no process runs, the rest after the restart. The last life recovers, answers what is
left and drains.

Checked against records that live outside the product's own state:

- no frozen call runs twice: each message's side effect is in the effect log at most
  once, and exactly once when (and only when) an approval of it was granted and used;
- every approval pending at a kill survives it: after the kill it is still pending (or was
  answered by the test), never lost, cancelled or expired;
- an answer after a restart resumes the turn: every turn that waited on an approval at a
  kill ends `resumed` (never `interrupted`), nothing is left parked or pending, and every
  session ends answered (its last conversation row is a reply).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.approval.approval_records import APPROVED, OPERATOR, PENDING, ApprovalRecords
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.llm.provider_protocol import CompletionRequest
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.storage.group_commit import GroupSync
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.turn_ledger import TurnLedger
from atomic_agent.turns.turn_states import INTERRUPTED, PARKED, RESUMED
from tests.chaos.chaos_life import CURRENT_LIFE, install_task_tracking
from tests.chaos.crash_plan import AFTER_COMMIT, BEFORE_COMMIT, FaultPlan, SimulatedCrash, instrument
from tests.chaos.world_log import JsonLog

GATED = "chaos.gated_effect"
ID_ARGS = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
CRASH_WINDOW = 14  # a write-crash lands within the first writes of a life (a turn is ~6-10 of them)
WRITE_CRASH = 0.35  # chance that a dying life dies at a write rather than killed while pending
ANSWER_IN_LIFE = 0.3  # chance that a pending approval is answered while its asker still waits
ANSWER_BETWEEN = 0.3  # ... while no process runs
MAX_TICKS = 20_000
MAX_SESSIONS = 2  # loop turns a life may take; a hang is a violation, not a stuck CI job
_ASKED = re.compile(r"\bdo (m\d+)\b")


@attrs.define
class SeedOutcome:
    seed: int
    violations: list[str]
    lives: int = 0
    kills_pending: int = 0  # kills that found approvals pending
    write_crashes: int = 0
    answered: int = 0


def gated_tools(life: str, plan: FaultPlan, effects: JsonLog) -> list[ToolSpec]:
    async def gated(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        plan.check_alive()
        approved = await ctx.request_approval("shell", f"effect {args['id']}")
        plan.check_alive()
        if not approved:
            return ToolResult.error(f"{args['id']} was not approved and did not run")
        effects.append({"life": life, "id": args["id"]})
        return ToolResult.ok(f"{args['id']} effect done")

    return [ToolSpec(GATED, "Do the side effect a message asks for (needs approval).", ID_ARGS,
                     ResourceClass.APPROVAL_GATED, gated, approval_category="shell")]


class GatedToolsPlugin:
    """Registers the gated tool of the life being booted (`current`): one plugin host serves
    every life of a worker, as building one costs more than the rest of a life's start."""

    def __init__(self) -> None:
        self.current: list[ToolSpec] = []

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        return self.current


_HOST: list[tuple[Any, GatedToolsPlugin]] = []


def _plugin_host() -> tuple[Any, GatedToolsPlugin]:
    if not _HOST:
        plugin = GatedToolsPlugin()
        host = fresh_plugin_host(environ={})
        host.register(plugin, "gated_tools")
        _HOST.append((host, plugin))
    return _HOST[0]


def decide(request: CompletionRequest) -> str:
    """From the conversation alone: call the gated effect for the message unless a result
    (done, refused, or cut off by a restart) is already there; then reply."""
    prompt = request.prompt
    asked = _ASKED.findall(prompt)
    message = asked[-1] if asked else "m?"
    tail = prompt[prompt.rfind(f"do {message}"):]
    if f"{message} effect done" in tail or f"{message} was not approved" in tail or "interrupted" in tail \
            or "never returned a result" in tail:
        return calls(("reply", {"text": f"answered {message}"}))
    return calls((GATED, {"id": message}))


class SlowSurface:
    """The host that shows requests and never answers by itself; `withdraw` ends a shown
    prompt (another surface answered the record: the gate reads the record's answer)."""

    def __init__(self) -> None:
        self.shown: dict[str, asyncio.Future[str]] = {}

    async def ask(self, request: Any) -> str:
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.shown[str(request.approval_id)] = future
        return await future

    def withdraw(self, approval_id: str) -> None:
        future = self.shown.pop(approval_id, None)
        if future is not None and not future.done():
            future.set_result("n")  # the record already holds the real answer, which wins


@attrs.define(eq=False)
class ApprovalLife:
    root: Path
    plan: FaultPlan
    name: str
    surface: SlowSurface = attrs.field(factory=SlowSurface)
    tasks: set[asyncio.Task[Any]] = attrs.field(factory=set)
    runtime: Runtime = attrs.field(init=False)
    store: SessionStore = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        env: dict[str, str] = {}
        host, plugin = _plugin_host()
        plugin.current = gated_tools(self.name, self.plan, JsonLog(self.root / "effects.jsonl", fsync=False))
        ctx = boot(self.root / "state", environ=env, host=host)
        provider = ScriptedProvider([], default=decide)  # type: ignore[arg-type]
        self.runtime = Runtime(ctx, provider=provider, ask=self.surface.ask, environ=env)
        self.store = SessionStore(ctx.state_dir)
        instrument(self.store, self.plan)
        self.runtime._sessions = self.store

    def spawn(self, coro: Any) -> asyncio.Future[Any]:
        token = CURRENT_LIFE.set(self)  # type: ignore[arg-type]  # the task factory files tasks under it
        try:
            return asyncio.ensure_future(coro)
        finally:
            CURRENT_LIFE.reset(token)

    async def bury(self) -> None:
        """SIGKILL: its tasks stop mid-await, its lease is released, nothing is closed cleanly."""
        self.plan.dead = True
        for _ in range(5):
            alive = [t for t in self.tasks if not t.done()]
            if not alive:
                break
            for task in alive:
                task.cancel()
            await asyncio.gather(*alive, return_exceptions=True)
        if self.runtime._lifecycle is not None:
            self.runtime._lifecycle.lease.release()
        self.store.close()
        self.runtime.gate.records.close()  # type: ignore[union-attr]
        self.runtime._traces.close_all()


_TEMPLATE: list[Path] = []


def _template() -> Path:
    """A migrated, empty state dir made once per process: each seed starts from a copy, so
    it pays for no schema creation (the same files a first start would write)."""
    if not _TEMPLATE:
        state = Path(tempfile.mkdtemp(prefix="approval-template-")) / "state"
        state.mkdir()
        (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "agent": {"approvalLevel": 1}}))
        store = SessionStore(state)
        for _ in range(MAX_SESSIONS):
            store.create(state.parent)
        store.close()
        ApprovalRecords.for_state_dir(state).close()
        _TEMPLATE.append(state)
    return _TEMPLATE[0]


def run_approval_seed(seed: int, root: Path) -> SeedOutcome:
    offload, GroupSync.offload = GroupSync.offload, False  # replay by loop turns, not thread timing
    try:
        return asyncio.run(_run(seed, root))
    finally:
        GroupSync.offload = offload


async def _run(seed: int, root: Path) -> SeedOutcome:
    install_task_tracking()
    rng = random.Random(seed)
    outcome = SeedOutcome(seed, [])
    state = root / "state"
    shutil.copytree(_template(), state)
    records = ApprovalRecords.for_state_dir(state)
    store = SessionStore(state)
    sessions = sorted(store.session_ids())[:rng.randint(1, MAX_SESSIONS)]  # the template's, made once
    store.close()
    dying = rng.randint(1, 3)
    parked_at_kill: set[tuple[str, str]] = set()  # (session, turn index) that waited on an approval at a kill
    try:
        for index in range(dying + 1):
            final = index == dying
            plan = FaultPlan()
            if not final and rng.random() < WRITE_CRASH:
                plan = FaultPlan(crash_at=rng.randint(1, CRASH_WINDOW), where=rng.choice((BEFORE_COMMIT,
                                                                                          AFTER_COMMIT)))
                outcome.write_crashes += 1
            life = ApprovalLife(root, plan, f"life{index}")
            outcome.lives += 1
            await _live(life, index, sessions, final, rng, records, outcome, parked_at_kill)
            if not final:
                for record in records.find((PENDING,)):  # answered while no process runs
                    if rng.random() < ANSWER_BETWEEN:
                        _answer(records, record.id, rng, outcome)
    finally:
        records.close()
    outcome.violations += check_approval_world(root, sessions, parked_at_kill)
    return outcome


async def _live(life: ApprovalLife, index: int, sessions: list[str], final: bool, rng: random.Random,
                records: ApprovalRecords, outcome: SeedOutcome, parked_at_kill: set[tuple[str, str]]) -> None:
    work: list[asyncio.Future[Any]] = []
    try:
        if index > 0:
            report = await life.spawn(life.runtime.recover(resume=True))
            work += list(report.results)
        else:
            work += [life.spawn(life.runtime.run_turn(f"do m{n}", session_id=sid)) for n, sid in enumerate(sessions)]
    except SimulatedCrash:
        await life.bury()
        return
    decided: set[str] = set()
    for _ in range(MAX_TICKS):
        await asyncio.sleep(0)
        if life.plan.dead:
            _note_parked(records, parked_at_kill)
            await life.bury()
            return
        shown = [r for r in records.find((PENDING,)) if r.id in life.surface.shown]
        for record in shown:
            if final or (record.id not in decided and rng.random() < ANSWER_IN_LIFE):
                _answer(records, record.id, rng, outcome)
                life.surface.withdraw(record.id)
            decided.add(record.id)
        waiting = [r for r in shown if records.get(r.id).state == PENDING]
        if not final and waiting:
            outcome.kills_pending += 1
            before = {r.id for r in records.find((PENDING,))}
            _note_parked(records, parked_at_kill)
            await life.bury()
            after = {i: records.get(i) for i in before}
            lost = [f"{i} {r.state}" for i, r in after.items() if r.state != PENDING]
            if lost:
                outcome.violations.append(f"life{index}: approvals pending at the kill did not survive it: {lost}")
            return
        if all(f.done() for f in work):
            break
    else:
        outcome.violations.append(f"life{index} did not settle within {MAX_TICKS} loop turns")
    if final or not life.plan.dead:
        for future in work:
            if future.done() and not future.cancelled() and future.exception() is not None:
                exc = future.exception()
                if not isinstance(exc, SimulatedCrash):
                    outcome.violations.append(f"life{index}: a turn failed: {type(exc).__name__}: {exc}")
        if life.plan.dead:
            await life.bury()
        else:
            life.runtime.gate.records.close()  # type: ignore[union-attr]
            await life.runtime.close()
            life.store.close()


def _note_parked(records: ApprovalRecords, parked_at_kill: set[tuple[str, str]]) -> None:
    for record in records.find((PENDING,)):
        if record.turn_id is not None:
            parked_at_kill.add((record.session_id, record.turn_id))


def _answer(records: ApprovalRecords, approval_id: str, rng: random.Random, outcome: SeedOutcome) -> None:
    if records.get(approval_id).state != PENDING:
        return
    records.answer(approval_id, rng.choice(("once", "deny")), principal=OPERATOR, surface="cli")
    outcome.answered += 1


def check_approval_world(root: Path, sessions: list[str], parked_at_kill: set[tuple[str, str]]) -> list[str]:
    violations: list[str] = []
    effects = JsonLog(root / "effects.jsonl", fsync=False).read()
    records = ApprovalRecords.for_state_dir(root / "state")
    store = SessionStore(root / "state")
    try:
        everything = records.find(limit=10_000)
        for n, sid in enumerate(sessions):
            message = f"m{n}"
            ran = [e for e in effects if e["id"] == message]
            mine = [r for r in everything if r.session_id == sid]
            used = [r for r in mine if r.state == APPROVED and r.used_at is not None]
            if len(ran) > 1:
                violations.append(f"{message}: the frozen call ran {len(ran)} times ({[e['life'] for e in ran]})")
            if used and not ran:
                violations.append(f"{message}: approval {used[0].id} was used but the call never ran")
            if ran and not used:
                violations.append(f"{message}: the call ran without a used approval ({[r.state for r in mine]})")
            left = [r.id for r in mine if r.state == PENDING]
            if left:
                violations.append(f"{message}: approvals still pending after the last life: {left}")
            if not TurnLedger(store, "checker").lane(sid):
                if ran or mine:
                    violations.append(f"{message}: never admitted, yet asked or ran ({len(mine)} records)")
                continue  # the admission died before its commit: the caller was never told it was taken
            entries = store.entries(sid)
            said = [e for e in entries if e.kind not in ("turn_started", "turn_finished")]
            if not said or said[-1].kind != "assistant_reply" or said[-1].text != f"answered {message}":
                violations.append(f"{message}: the session is not answered; last rows "
                                  f"{[(e.kind, e.text) for e in entries[-4:]]}")
        ledger = TurnLedger(store, "checker")
        for turn in ledger.in_state(PARKED):
            violations.append(f"turn {turn.turn_id} is still parked: {turn.reason}")
        for sid, turn_index in parked_at_kill:
            turns = [t for t in ledger.lane(sid) if str(t.turn_index) == turn_index]
            states = [t.state for t in turns]
            if any(s == INTERRUPTED for s in states) or (turns and RESUMED not in states
                                                          and "completed" not in states):
                violations.append(f"session {sid} turn {turn_index} waited on an approval at a kill and ended "
                                  f"{states}, not resumed")
    finally:
        records.close()
        store.close()
    return violations
