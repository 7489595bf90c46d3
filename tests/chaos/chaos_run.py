"""One seeded run: a world, some lives that die at a random write, a last life left alone
to finish, then the invariant check. Everything random comes from `random.Random(seed)`."""

from __future__ import annotations

import asyncio
import os
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

import attrs

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.storage.group_commit import GroupSync
from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.chaos_driver import Driver
from tests.chaos.chaos_life import ChaosWorld, Life, install_task_tracking
from tests.chaos.crash_plan import AFTER_COMMIT, BEFORE_COMMIT, FaultPlan
from tests.chaos.invariants import check_world, describe
from tests.chaos.workload import Mix, Op, workload


@attrs.frozen
class RunSpec:
    mix: Mix = Mix()
    crashes: tuple[int, int] = (1, 3)  # how many lives die, inclusive range
    crash_window: int = 40  # a life dies at a write drawn from 1..crash_window
    ops_per_life: tuple[int, int] | None = None  # None: each life takes ops until it dies
    flaky: float = 0.0  # chance that any write of a non-final life fails and the process goes on
    # per-session admission order, as acknowledged (True), or only as a caller of owners in separate
    # processes can observe it ("after_acknowledgement": see invariants), or not at all (False)
    fifo: bool | str = True
    owners: int = 1  # >1: that many live owners (Runtimes) at once over one state dir, per round


@attrs.define
class RunOutcome:
    seed: int
    violations: list[str]
    lives: int
    crashes: int
    commits: int
    errors: list[str]
    dump: str = ""


def create_sessions(world: ChaosWorld, count: int) -> list[str]:
    if world.database is None:
        store = SessionStore(world.state_dir)
        try:
            return [store.create(world.root).id for _ in range(count)]
        finally:
            store.close()
    backend = world.database.backend()
    try:
        pg_store = backend.open_store()
        try:
            return [pg_store.create(world.root).id for _ in range(count)]
        finally:
            pg_store.close()
    finally:
        backend.close()


def draw_plan(rng: random.Random, spec: RunSpec) -> FaultPlan:
    flaky = frozenset(i for i in range(1, 200) if rng.random() < spec.flaky) if spec.flaky else frozenset()
    return FaultPlan(crash_at=rng.randint(1, spec.crash_window), where=rng.choice((BEFORE_COMMIT, AFTER_COMMIT)),
                     flaky=flaky)


async def run_lives(world: ChaosWorld, rng: random.Random, spec: RunSpec, plans: list[FaultPlan] | None = None,
                    expected: tuple[type, ...] = (), ops: list[Op] | None = None,
                    abort_rng: random.Random | None = None) -> RunOutcome:
    """Lives with `plans` (drawn when None), then a crash-free life that drains everything."""
    install_task_tracking()
    offload, GroupSync.offload = GroupSync.offload, False  # interleavings replay by loop turns, not thread timing
    try:
        return await _run_lives(world, rng, spec, plans, expected, ops, abort_rng)
    finally:
        GroupSync.offload = offload


async def _run_lives(world: ChaosWorld, rng: random.Random, spec: RunSpec, plans: list[FaultPlan] | None,
                     expected: tuple[type, ...], ops: list[Op] | None,
                     abort_rng: random.Random | None) -> RunOutcome:
    world.state_dir.mkdir(parents=True, exist_ok=True)
    driver = Driver(world, rng, workload(rng, spec.mix) if ops is None else list(ops), expected,
                    abort=spec.mix.abort, abort_rng=abort_rng)
    driver.sessions = create_sessions(world, spec.mix.sessions)
    if plans is None:
        plans = [draw_plan(rng, spec) for _ in range(rng.randint(*spec.crashes))]
    lives = crashes = commits = 0
    if spec.owners > 1:  # one round of live owners side by side; each may die on its own
        group = [Life(world, plan) for plan in plans] + [Life(world, FaultPlan())
                                                         for _ in range(max(0, spec.owners - len(plans)))]
        died = await asyncio.gather(*(driver.live(life, recover=False) for life in group))
        for life, gone in zip(group, died, strict=True):
            lives, crashes, commits = lives + 1, crashes + gone, commits + life.plan.commits
            if not gone:
                await life.close()
        plans = []
    for index, plan in enumerate(plans):
        budget = rng.randint(*spec.ops_per_life) if spec.ops_per_life else None
        life = Life(world, plan)
        lives += 1
        died = await driver.live(life, recover=index > 0, ops_budget=budget)
        commits += plan.commits
        crashes += died
        if not died:
            await life.close()
    final = Life(world, FaultPlan())
    lives += 1
    await driver.live(final, recover=True)
    commits += final.plan.commits
    await final.close()
    violations = check_world(world, driver.sessions, fifo=spec.fifo)
    if spec.flaky == 0.0:
        violations += [f"unexpected error: {e}" for e in driver.errors]
    dump = describe(world, driver.sessions) if violations else ""
    return RunOutcome(0, violations, lives, crashes, commits, driver.errors, dump)


def scratch_root() -> str | None:
    """Where in-process worlds live: `CHAOS_TMPDIR`, else /dev/shm when there is one.

    An in-process crash abandons the runtime but not the kernel, so the page cache keeps
    every committed write and fsync proves nothing here (power loss is tier (e)'s job);
    on tmpfs a FULL commit costs no disk flush, which makes these tiers ~3x faster."""
    chosen = os.environ.get("CHAOS_TMPDIR")
    if chosen:
        return chosen
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None


def run_seed(seed: int, spec: RunSpec, root: Path | None = None,
             plans: Callable[[random.Random], list[FaultPlan]] | None = None,
             expected: tuple[type, ...] = (), ops: list[Op] | None = None,
             database: ChaosDatabase | None = None) -> RunOutcome:
    """One seed; its session state in `database` when given (else the world's sessions.sqlite)."""
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix=f"chaos{seed}-", dir=scratch_root()) as tmp:
        world = ChaosWorld(Path(root or tmp), database=database)
        abort_rng = random.Random(f"abort-{seed}")  # its own stream: other draws of the seed are unchanged
        outcome = asyncio.run(run_lives(world, rng, spec, plans(rng) if plans else None, expected, ops, abort_rng))
    outcome.seed = seed
    return outcome


def explain(outcome: RunOutcome) -> str:
    return (f"seed {outcome.seed}: {len(outcome.violations)} violation(s) over {outcome.lives} lives "
            f"({outcome.crashes} crashes)\n" + "\n".join(outcome.violations[:20]) + "\n" + outcome.dump)
