"""`serve` grew with every request because a server that starts a session
per request kept something per session for ever — a trace recorder object, the reflection
runner's newest-turn index, a slot assignment, a breaker partition. Each is now bounded
(the benchmark benchmarks/serve_memory.py prints RSS after 1k, 10k and 50k requests)."""

from __future__ import annotations

import gc
from pathlib import Path

from atomic_agent.api import TurnStart
from atomic_agent.config.app_config import TracingConfig
from atomic_agent.plugins.llama_server.slot_manager import SlotManager
from atomic_agent.plugins.memory_reflection.reflection_config import ReflectionConfig
from atomic_agent.plugins.memory_reflection.reflection_runner import LATEST_TURNS_KEPT, ReflectionRunner
from atomic_agent.providers.fallback_chain import PARTITIONS_KEPT, ProviderFallbackChain
from atomic_agent.testing.scripted_provider import ScriptedProvider
from atomic_agent.tracing.trace_recorder import TraceRecorders
from tests.agent.loop_harness import make_runtime


def session(n: int) -> str:
    return f"{n:012x}"


def test_trace_recorders_are_forgotten_not_only_closed(tmp_path: Path) -> None:
    recorders = TraceRecorders(tmp_path, lambda: TracingConfig(), max_open=8)
    for n in range(200):
        recorders.for_session(session(n)).record("x")
    gc.collect()
    assert len(recorders._recorders) == 8 and len(recorders._evicted) == 0
    held = recorders.for_session(session(500))  # a running turn holds its recorder ...
    for n in range(600, 620):
        recorders.for_session(session(n))
    assert recorders.for_session(session(500)) is held  # ... so its session never gets a second one


def test_slot_assignments_are_bounded_and_stay_balanced() -> None:
    slots = SlotManager(3, max_sessions=50)
    for n in range(1000):
        slots.main_slot(session(n))
    assignments = slots.assignments()
    assert len(assignments) == 50
    counts = [list(assignments.values()).count(s) for s in slots.main_slots]
    assert max(counts) - min(counts) <= 2  # new sessions go to the least loaded slot; evictions drift it by one


def test_breaker_partitions_are_bounded() -> None:
    chain = ProviderFallbackChain(["primary", "backup"])
    for n in range(PARTITIONS_KEPT + 100):
        chain.partition(session(n))
    assert len(chain._partitions) == PARTITIONS_KEPT


async def test_reflection_remembers_a_bounded_number_of_sessions(tmp_path: Path) -> None:
    import atomic_agent.plugins.memory_reflection as reflection_plugin

    runtime = make_runtime(tmp_path, ScriptedProvider(), extra=[(reflection_plugin, "memory_reflection")])
    runner = ReflectionRunner(runtime, ReflectionConfig())
    for n in range(LATEST_TURNS_KEPT + 100):
        runner.before_turn(TurnStart(session(n), 0, "hi", str(tmp_path)))
    await runtime.close()
    assert len(runner._latest_turn) == LATEST_TURNS_KEPT
