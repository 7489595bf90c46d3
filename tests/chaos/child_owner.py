"""Tier (c): one live owner as a child process. The parent kills it with SIGKILL at a random
instant, or its own plan ends it with os._exit at the N-th write.

    python -m tests.chaos.child_owner <root> <seed> <role> <roles> <crash_at|0> <where>

It plays the ops whose index % roles == role (its session state in the PostgreSQL database
CHAOS_POSTGRESQL names, when set: chaos_database), writes its acknowledgements to the world's
fsync'd ack log (so a kill loses none it made), recovers what dead owners left, and
closes cleanly when its share is done.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from pathlib import Path

from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.chaos_driver import Driver
from tests.chaos.chaos_life import ChaosWorld, Life, install_task_tracking
from tests.chaos.crash_plan import FaultPlan
from tests.chaos.suite_specs import OWNER_PROCESSES
from tests.chaos.workload import workload

EXIT_CODE = 137


async def main(root: Path, seed: int, role: int, roles: int, crash_at: int, where: str) -> None:
    install_task_tracking()
    world = ChaosWorld(root, fsync_logs=True, database=ChaosDatabase.from_environ(os.environ))
    ops = workload(random.Random(seed), OWNER_PROCESSES.mix)
    driver = Driver(world, random.Random(seed * 31 + role), [op for i, op in enumerate(ops) if i % roles == role])
    driver.sessions = json.loads((root / "sessions.json").read_text())
    plan = FaultPlan(crash_at=crash_at or None, where=where, exit_code=EXIT_CODE)
    life = Life(world, plan, name=f"proc{role}-{seed}")
    await driver.live(life, recover=True)
    await life.close()
    if driver.errors:
        print("\n".join(driver.errors), file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    a = sys.argv[1:]
    asyncio.run(main(Path(a[0]), int(a[1]), int(a[2]), int(a[3]), int(a[4]), a[5]))
