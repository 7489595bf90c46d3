"""Tier (g): graceful stops. Each life but the last takes load until a real SIGTERM arrives
(sent to this process right after a randomly drawn write commits), handled the way `serve`
and the sidecar handle it: the caller stops issuing, the runtime drains or parks with a
randomly drawn grace period, and the life closes cleanly. Some lives are also killed during
their drain (a second, harder failure). The next life restarts — recovery, then resumed
work — and a last life is left alone to finish; then every promise is checked."""

from __future__ import annotations

import asyncio
import random
import signal
import tempfile
from pathlib import Path

import attrs

from tests.chaos.chaos_driver import Driver
from tests.chaos.chaos_life import ChaosWorld, Life, install_task_tracking
from tests.chaos.chaos_run import RunOutcome, create_sessions, scratch_root
from tests.chaos.crash_plan import AFTER_COMMIT, BEFORE_COMMIT, FaultPlan
from tests.chaos.invariants import check_world, describe
from tests.chaos.workload import Mix, workload

GRACES_S = (0.0, 0.001, 0.02, 5.0)  # none (park mid-step), a sliver, a little, plenty (steps finish)


@attrs.frozen
class StopSpec:
    mix: Mix = Mix()
    stops: tuple[int, int] = (1, 3)  # how many lives end by SIGTERM, inclusive range
    signal_window: int = 30  # the signal follows a write drawn from 1..signal_window
    kill_during_drain: float = 0.25  # chance a stopped life is also killed at a later write


def draw_stop(rng: random.Random, spec: StopSpec) -> tuple[FaultPlan, float]:
    at = rng.randint(1, spec.signal_window)
    crash = at + rng.randint(1, 12) if rng.random() < spec.kill_during_drain else None
    plan = FaultPlan(crash_at=crash, where=rng.choice((BEFORE_COMMIT, AFTER_COMMIT)), signal_at=at)
    return plan, rng.choice(GRACES_S)


async def run_stops(world: ChaosWorld, rng: random.Random, spec: StopSpec) -> RunOutcome:
    install_task_tracking()
    world.state_dir.mkdir(parents=True, exist_ok=True)
    driver = Driver(world, rng, workload(rng, spec.mix))
    driver.sessions = create_sessions(world, spec.mix.sessions)
    loop = asyncio.get_running_loop()
    lives = crashes = commits = 0
    for index in range(rng.randint(*spec.stops)):
        plan, grace = draw_stop(rng, spec)
        life = Life(world, plan)
        loop.add_signal_handler(signal.SIGTERM, life.begin_graceful_stop, grace)
        try:
            died = await driver.live(life, recover=index > 0)
        finally:
            loop.remove_signal_handler(signal.SIGTERM)
        lives, commits, crashes = lives + 1, commits + plan.commits, crashes + died
        if not died:
            await life.close()
    final = Life(world, FaultPlan())
    await driver.live(final, recover=True)
    await final.close()
    violations = check_world(world, driver.sessions)
    violations += [f"unexpected error: {e}" for e in driver.errors]
    dump = describe(world, driver.sessions) if violations else ""
    return RunOutcome(0, violations, lives + 1, crashes, commits + final.plan.commits, driver.errors, dump)


def run_stop_seed(seed: int, spec: StopSpec) -> RunOutcome:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory(prefix=f"stop{seed}-", dir=scratch_root()) as tmp:
        outcome = asyncio.run(run_stops(ChaosWorld(Path(tmp)), rng, spec))
    outcome.seed = seed
    return outcome
