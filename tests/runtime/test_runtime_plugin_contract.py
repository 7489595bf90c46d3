"""The runtime keeps the hook contract its docstrings promise: services exist before the
hooks that use them, plugin services are served and closed after `runtime_stopping`,
channels start after `runtime_started` and stop before `runtime_stopping` (a raising start
isolated and reported), and `consolidate` runs on the runtime's tick, one tick at a time,
each phase's failure isolated."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ChannelSpec, MemoryPhase, ServiceSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.runtime.runtime import Runtime, create_runtime
from atomic_agent.testing.runtime_kit import boot_for_test
from atomic_agent.testing.scripted_provider import ScriptedProvider


def boot_with(tmp_path: Path, plugins: dict[str, object], agent: dict[str, Any] | None = None) -> Any:
    return boot_for_test(tmp_path / "state", plugins=plugins, config={"agent": agent} if agent else None)


class Recorder:
    """Records lifecycle order; provides a service, a channel per name, a raising channel."""

    def __init__(self, log: list[str], channels: tuple[str, ...] = ("chan.a",), failing: tuple[str, ...] = ()) -> None:
        self.log = log
        self.channels = channels
        self.failing = failing
        self.seen_in_tools: dict[str, object] = {}

    @hookimpl
    def register_services(self) -> list[ServiceSpec]:
        def build(runtime: Any) -> dict[str, int]:
            self.log.append("service built")
            return {"uses": 0}

        return [ServiceSpec("recorder.store", build, close=lambda service: self.log.append("service closed"))]

    @hookimpl
    def register_tools(self, runtime: Any) -> list:
        for name in ("approval_gate", "turn_controller", "state_dir", "recorder.store"):
            self.seen_in_tools[name] = runtime.service(name)
        return []

    @hookimpl
    def register_channels(self, runtime: Any) -> list[ChannelSpec]:
        log, failing = self.log, self.failing

        class Chan:
            def __init__(self, name: str) -> None:
                self.name = name

            async def start(self) -> None:
                if self.name in failing:
                    raise ConnectionError(f"{self.name} cannot reach its server")
                log.append(f"{self.name} started")

            async def stop(self) -> None:
                log.append(f"{self.name} stopped")

            def status(self) -> dict[str, Any]:
                return {"polling": True}

        return [ChannelSpec(name, lambda rt, n=name: Chan(n)) for name in (*self.channels, *self.failing)]

    @hookimpl
    def runtime_started(self, runtime: Any) -> None:
        self.log.append("runtime_started")

    @hookimpl
    def runtime_stopping(self, runtime: Any) -> None:
        runtime.service("recorder.store")["uses"] += 1  # still usable here
        self.log.append("runtime_stopping")


async def test_services_promised_to_registration_hooks_exist_when_they_run(tmp_path: Path) -> None:
    plugin = Recorder([])
    runtime = Runtime(boot_with(tmp_path, {"recorder": plugin}), provider=ScriptedProvider([]))
    try:
        assert plugin.seen_in_tools["approval_gate"] is runtime.gate
        assert plugin.seen_in_tools["turn_controller"] is runtime.turns
        assert plugin.seen_in_tools["recorder.store"] is runtime.service("recorder.store")
        assert runtime.service("tool_registry") is runtime.registry
    finally:
        await runtime.close()


async def test_service_with_a_default_returns_it_for_a_missing_or_broken_service(tmp_path: Path) -> None:
    from atomic_agent.api import ServiceUnavailableError

    class Broken:
        @hookimpl
        def register_services(self) -> list[ServiceSpec]:
            return [ServiceSpec("broken.store", lambda rt: 1 / 0)]

    runtime = Runtime(boot_with(tmp_path, {"recorder": Recorder([]), "broken": Broken()}), provider=ScriptedProvider([]))
    try:
        fallback = object()
        assert runtime.service("nobody.provides", None) is None
        assert runtime.service("broken.store", fallback) is fallback
        assert runtime.service("recorder.store", None) is runtime.service("recorder.store")
        for name in ("nobody.provides", "broken.store"):
            try:
                runtime.service(name)
            except ServiceUnavailableError as exc:
                assert name in str(exc)
            else:
                raise AssertionError(f"{name} was served")
        assert runtime.services("nobody.provides") == [] and runtime.services("broken.store") == []
    finally:
        await runtime.close()


async def test_channels_start_after_runtime_started_and_stop_before_runtime_stopping(tmp_path: Path) -> None:
    log: list[str] = []
    ctx = boot_with(tmp_path, {"recorder": Recorder(log, channels=("chan.a", "chan.b"))})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]), serving=True)
    assert runtime.channels.status()["chan.a"] == {"state": "running", "polling": True}
    await runtime.close()
    assert log == ["service built", "runtime_started", "chan.a started", "chan.b started", "chan.b stopped",
                   "chan.a stopped", "runtime_stopping", "service closed"]


async def test_a_channel_whose_start_raises_is_reported_and_the_others_run(tmp_path: Path) -> None:
    log: list[str] = []
    ctx = boot_with(tmp_path, {"recorder": Recorder(log, channels=("chan.ok",), failing=("chan.down",))})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]), serving=True)
    try:
        status = runtime.channels.status()
        assert status["chan.ok"]["state"] == "running"
        assert status["chan.down"]["state"] == "failed" and "cannot reach its server" in status["chan.down"]["error"]
        report = ctx.host.reports["recorder"]
        assert report.status == "failed" and "chan.down" in (report.error or "")
    finally:
        await runtime.close()
    assert "chan.ok stopped" in log and "chan.down stopped" not in log


class Consolidating:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.running = 0
        self.most_at_once = 0
        self.ticked = asyncio.Event()

    @hookimpl
    def register_memory_phases(self, runtime: Any) -> list[MemoryPhase]:
        async def slow() -> None:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            await asyncio.sleep(0.01)
            self.running -= 1
            self.calls.append("slow")

        async def broken() -> None:
            self.calls.append("broken")
            raise ValueError("consolidation broke")

        async def last() -> None:
            self.calls.append("last")
            self.ticked.set()

        return [MemoryPhase("a-broken", order=1, consolidate=broken), MemoryPhase("b-slow", order=2, consolidate=slow),
                MemoryPhase("c-last", order=3, consolidate=last), MemoryPhase("d-reads-only", order=4)]


async def test_consolidate_runs_every_phase_in_order_with_errors_isolated(tmp_path: Path) -> None:
    plugin = Consolidating()
    runtime = Runtime(boot_with(tmp_path, {"memory_x": plugin}), provider=ScriptedProvider([]))
    try:
        outcomes = await runtime.consolidate_now()
    finally:
        await runtime.close()
    assert plugin.calls == ["broken", "slow", "last"]
    assert outcomes == {"a-broken": "ValueError: consolidation broke", "b-slow": "ok", "c-last": "ok"}


async def test_one_consolidation_tick_at_a_time(tmp_path: Path) -> None:
    plugin = Consolidating()
    runtime = Runtime(boot_with(tmp_path, {"memory_x": plugin}), provider=ScriptedProvider([]))
    try:
        await asyncio.gather(*(runtime.consolidate_now() for _ in range(4)))
    finally:
        await runtime.close()
    assert plugin.most_at_once == 1 and plugin.calls.count("slow") == 4


async def test_the_runtime_ticks_on_the_configured_interval(tmp_path: Path) -> None:
    plugin = Consolidating()
    ctx = boot_with(tmp_path, {"memory_x": plugin}, agent={"consolidationIntervalS": 1})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]), serving=True)
    try:
        assert runtime.ticks.active == ["memory.consolidate"]  # one timer engine: the plugins' ticks
        await asyncio.wait_for(plugin.ticked.wait(), timeout=60)
    finally:
        await runtime.close()
    assert runtime.ticks.active == [] and runtime.ticks.ticks["memory.consolidate"] >= 1


async def test_interval_zero_never_ticks(tmp_path: Path) -> None:
    ctx = boot_with(tmp_path, {"memory_x": Consolidating()}, agent={"consolidationIntervalS": 0})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]), serving=True)
    try:
        assert runtime.ticks.active == []
    finally:
        await runtime.close()


async def test_a_one_shot_runtime_runs_no_channel_and_no_tick(tmp_path: Path) -> None:
    """`run`, `tools call` and the other one-shot commands must not poll a channel another
    process owns (Telegram's lock) or fire scheduled work; only serving hosts do."""
    log: list[str] = []
    plugin = Consolidating()
    ctx = boot_with(tmp_path, {"recorder": Recorder(log, channels=("chan.a",)), "memory_x": plugin},
                    agent={"consolidationIntervalS": 1})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]))
    try:
        assert "runtime_started" in log and "chan.a started" not in log
        assert runtime.ticks.active == []
    finally:
        await runtime.close()
    assert "chan.a stopped" not in log
