"""The `tasks` config block: the runner's retry budget, the scheduler tick, the agent tools."""

from __future__ import annotations

import attrs

from atomic_agent.api import int_field, value_field


@attrs.frozen
class TasksConfig:
    """Durable tasks. `enabled=false` keeps the store (the CLI still reads it) but nothing
    runs: no scheduler tick, no agent tools, and `run`/`tick` refuse."""

    enabled: bool = value_field(True, env="ATOMIC_AGENT_TASKS_ENABLED")
    max_attempts: int = int_field(3, 1, 100)
    backoff_initial_ms: int = int_field(1000, 10, 3_600_000)
    backoff_max_ms: int = int_field(60_000, 10, 86_400_000)
    scheduler_enabled: bool = value_field(True, env="ATOMIC_AGENT_TASKS_SCHEDULER_ENABLED")
    scheduler_tick_ms: int = int_field(5000, 50, 3_600_000)
    scheduler_batch: int = int_field(10, 1, 10_000)
    min_interval_ms: int = int_field(60_000, 1000, 86_400_000)
    agent_tools_enabled: bool = value_field(True, env="ATOMIC_AGENT_TASKS_AGENT_TOOLS_ENABLED")
    max_active_per_session: int = int_field(20, 1, 10_000)
