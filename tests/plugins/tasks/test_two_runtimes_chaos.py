"""Two runtimes on one state dir, 50 due tasks: every occurrence runs exactly once.

Each seed draws the task mix (one-shots, intervals, given and fresh sessions), the
providers' latencies and transient failures, both runtimes' batch sizes and how their
ticks interleave, over several rounds of the clock. `CHAOS_SEEDS=N` widens it.
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.chaos.chaos_seeds import seed_count, seed_params
from tests.plugins.tasks.task_kit import FakeClock, task_runtime
from tests.turns.turn_kit import latest_user_text

REGRESSION_SEEDS: list[int] = []
TASKS = 50
ROUNDS = 4
EVERY_MS = 60_000


class FlakyProvider(ScriptedProvider):
    """Answers after a drawn delay; now and then fails like a server that went away."""

    def __init__(self, rng: random.Random) -> None:
        super().__init__([])
        self.rng = rng

    async def complete(self, request: Any, on_delta: Any = None) -> Any:
        await asyncio.sleep(self.rng.random() * 0.003)
        if self.rng.random() < 0.1:
            raise ProviderError("the server went away", status=503)
        self.script.append(calls(("reply", {"text": f"re: {latest_user_text(request.prompt)}"})))
        return await super().complete(request, on_delta)


@pytest.mark.parametrize("seed", seed_params(REGRESSION_SEEDS, count=seed_count(default=12)))
async def test_two_runtimes_on_one_state_dir_run_each_occurrence_exactly_once(tmp_path: Path, seed: int):
    rng = random.Random(seed)
    clock = FakeClock()
    a = await task_runtime(tmp_path, FlakyProvider(random.Random(seed * 7 + 1)), clock, maxAttempts=50,
                           backoffInitialMs=10, backoffMaxMs=10)
    b = await task_runtime(tmp_path, FlakyProvider(random.Random(seed * 7 + 2)), clock, maxAttempts=50,
                           backoffInitialMs=10, backoffMaxMs=10)
    shared = [a.open_session(None, tmp_path).id for _ in range(3)]
    created = []
    for n in range(TASKS):
        creator = (a if rng.random() < 0.5 else b).service("tasks")
        recurring = rng.random() < 0.3
        session = rng.choice(shared) if rng.random() < 0.4 and not recurring else None
        created.append(creator.create(f"task {n}", session_id=session,
                                      schedule={"kind": "interval", "everyMs": EVERY_MS} if recurring else None))
    rounds_run = 0
    for _ in range(ROUNDS):
        for _ in range(30):  # drain this instant (retries come due 10 ms later)
            passes = [rt.service("tasks").runner.run_due(clock.now, rng.randint(1, 20)) for rt in (a, b)
                      for _ in range(rng.randint(1, 2))]
            rng.shuffle(passes)
            await asyncio.gather(*passes)
            clock.advance(10)
        rounds_run += 1
        clock.set(created[0].created_at + rounds_run * EVERY_MS)
    store = a.service("tasks").store
    texts = Counter(t.text for sid in a.sessions.session_ids() for t in a.lifecycle.ledger.lane(sid)
                    if t.origin == "scheduler")
    for task in created:
        history = store.runs(task.id)
        completed = [r.occurrence_at for r in history if r.status == "completed"]
        assert len(completed) == len(set(completed)), (task.id, history)  # no occurrence twice
        attempts = [(r.occurrence_at, r.attempt) for r in history if r.status != "skipped"]
        assert len(attempts) == len(set(attempts))
        assert all(r.status != "running" for r in history), history  # every claimed attempt was settled by its owner
        turn_ids = [r.turn_id for r in history if r.status != "skipped"]
        assert all(turn_ids) and len(set(turn_ids)) == len(turn_ids), history
        assert texts[task.message] == len(attempts), (task.message, history)  # one turn per attempt, no more
        if not task.recurring:
            assert len(completed) == 1 and store.get(task.id).status == "completed", history
        else:
            assert len(completed) >= ROUNDS - 1, history
    for rt in (a, b):
        await rt.close()
