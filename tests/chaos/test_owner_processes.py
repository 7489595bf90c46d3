"""Tier (c): two live owner processes on one state dir; one ends itself with os._exit at a
random write, the other is SIGKILLed at a random instant; a last life recovers and drains.
Heavy (a Python start-up per owner), so it runs CHAOS_PROCESS_SEEDS (default 6) seeds; and the
same with the session state in one PostgreSQL database shared by the two processes (issue 37's
fleet), CHAOS_PG_PROCESS_SEEDS (default 3) seeds."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.chaos_driver import Driver
from tests.chaos.chaos_life import ChaosWorld, Life, install_task_tracking
from tests.chaos.chaos_run import create_sessions
from tests.chaos.chaos_seeds import seed_count, seed_params
from tests.chaos.crash_plan import FaultPlan
from tests.chaos.invariants import check_world, describe
from tests.chaos.suite_specs import OWNER_PROCESSES

ROOT = Path(__file__).resolve().parents[2]


def _spawn(root: Path, seed: int, role: int, crash_at: int, where: str,
           database: ChaosDatabase | None) -> subprocess.Popen[bytes]:
    env = {**os.environ, **(database.to_environ() if database else {})}
    return subprocess.Popen([sys.executable, "-m", "tests.chaos.child_owner", str(root), str(seed), str(role), "2",
                             str(crash_at), where], cwd=ROOT, stderr=subprocess.PIPE, env=env)


async def _drain(world: ChaosWorld, sessions: list[str]) -> None:
    install_task_tracking()
    driver = Driver(world, random.Random(0), [])
    driver.sessions = sessions
    life = Life(world, FaultPlan(), name="drain")
    await driver.live(life, recover=True)
    await life.close()


@pytest.mark.parametrize("seed", seed_params([], seed_count(6, "CHAOS_PROCESS_SEEDS")))
def test_killed_owner_processes_keep_every_promise(seed: int, tmp_path: Path) -> None:
    _owner_processes_keep_every_promise(seed, tmp_path, None)


@pytest.mark.parametrize("seed", seed_params([], seed_count(3, "CHAOS_PG_PROCESS_SEEDS")))
def test_killed_owner_processes_on_one_postgresql_keep_every_promise(seed: int, tmp_path: Path,
                                                                      postgresql_database: Any) -> None:
    _owner_processes_keep_every_promise(seed, tmp_path, ChaosDatabase.of(postgresql_database))


def _owner_processes_keep_every_promise(seed: int, tmp_path: Path, database: ChaosDatabase | None) -> None:
    rng = random.Random(seed)
    world = ChaosWorld(tmp_path, fsync_logs=True, database=database)
    world.state_dir.mkdir(parents=True)
    sessions = create_sessions(world, OWNER_PROCESSES.mix.sessions)
    (tmp_path / "sessions.json").write_text(json.dumps(sessions))
    exiting = _spawn(tmp_path, seed, 0, rng.randint(1, OWNER_PROCESSES.crash_window),
                     rng.choice(("before_commit", "after_commit")), database)
    killed = _spawn(tmp_path, seed, 1, 0, "before_commit", database)
    time.sleep(rng.uniform(0.3, 1.5))
    if killed.poll() is None:
        os.kill(killed.pid, signal.SIGKILL)
    for proc in (exiting, killed):
        proc.wait(timeout=60)
        assert proc.returncode in (0, 137, -signal.SIGKILL), proc.stderr.read().decode()[-2000:]
    asyncio.run(_drain(world, sessions))
    # two owner processes: FIFO as a caller can observe it across processes (see invariants)
    violations = check_world(world, sessions, fifo="after_acknowledgement")
    assert not violations, f"seed {seed}:\n" + "\n".join(violations) + "\n" + describe(world, sessions)
