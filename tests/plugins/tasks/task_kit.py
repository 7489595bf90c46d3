"""A runtime with the tasks plugin over a scripted provider, and a clock the test moves."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import attrs

import atomic_agent.plugins.tasks as tasks_plugin
from atomic_agent.config.config_file import CONFIG_VERSION
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider
from tests.agent.loop_harness import ToolLog, make_runtime

# the timer never fires on its own in a test: ticks are run by hand with the clock moved
TEST_TASKS_CONFIG = {"schedulerTickMs": 3_600_000, "minIntervalMs": 1000, "backoffInitialMs": 1000,
                     "backoffMaxMs": 4000, "maxAttempts": 3}
START_MS = int(datetime(2026, 6, 1, 12, 0, tzinfo=ZoneInfo("UTC")).timestamp() * 1000)


@attrs.define
class FakeClock:
    now: int = START_MS

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now

    def set(self, ms: int) -> int:
        self.now = ms
        return ms


def write_tasks_config(state_dir: Path, **overrides: Any) -> None:
    state_dir.mkdir(parents=True, exist_ok=True)
    raw = {"version": CONFIG_VERSION, "tasks": {**TEST_TASKS_CONFIG, **overrides}}
    (state_dir / "config.json").write_text(json.dumps(raw))


async def task_runtime(tmp_path: Path, provider: ScriptedProvider, clock: FakeClock, *, log: ToolLog | None = None,
                       ask: Any = None, start: bool = True, extra_plugins: list[tuple[object, str]] = (),
                       **config: Any) -> Runtime:
    """`tmp_path/state` holds the state; every runtime made here shares it (restarts)."""
    write_tasks_config(tmp_path / "state", **config)
    runtime = make_runtime(tmp_path, provider, log, ask=ask, extra=[(tasks_plugin, "tasks"), *extra_plugins])
    runtime.service("tasks").clock = clock
    if start:
        await runtime.start()
    return runtime


def runs(runtime: Runtime, task_id: str) -> list[tuple[str, int]]:
    """(status, skipped count) of each run row, oldest first."""
    return [(r.status, r.skipped_count) for r in runtime.service("tasks").store.runs(task_id)]


def turns_with_text(runtime: Runtime, session_id: str, text: str) -> list[Any]:
    return [t for t in runtime.lifecycle.ledger.lane(session_id) if t.text == text]
