"""The runtime owns the plugins' periodic work: no re-entry, errors counted and swallowed,
started with the runtime and stopped before its services close."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.hook_records import TickSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.runtime.background_work import PluginTicks
from tests.agent.loop_harness import make_runtime, until
from tests.turns.turn_kit import answering_provider


async def test_a_tick_is_never_entered_again_while_it_runs():
    inside = 0
    most = 0

    async def slow() -> None:
        nonlocal inside, most
        inside += 1
        most = max(most, inside)
        await asyncio.sleep(0.01)
        inside -= 1

    ticks = PluginTicks([TickSpec("t", 0.001, slow)])
    await asyncio.gather(*(ticks.run_once("t") for _ in range(5)))
    assert (most, ticks.ticks["t"]) == (1, 5)


async def test_a_failing_tick_is_counted_and_the_timer_keeps_ticking(capsys):
    calls = 0

    async def flaky() -> None:
        nonlocal calls
        calls += 1
        if calls % 2:
            raise RuntimeError("tick broke")

    ticks = PluginTicks([TickSpec("flaky", 0.001, flaky, plugin="p")])
    ticks.start()
    await until(lambda: calls >= 4)
    await ticks.stop()
    assert calls >= 4 and ticks.errors["flaky"] >= 2 and ticks.active == []
    assert "tick 'flaky' of plugin 'p' failed: RuntimeError: tick broke" in capsys.readouterr().err


def test_a_tick_needs_a_positive_interval():
    async def nothing() -> None:
        return None

    with pytest.raises(ValueError):
        TickSpec("t", 0, nothing)


class TickPlugin:
    def __init__(self) -> None:
        self.seen: list[str] = []

    @hookimpl
    def register_ticks(self, runtime: Any) -> list[TickSpec]:
        async def run() -> None:
            self.seen.append("tick")

        return [TickSpec("probe", 3600, run)]


async def test_the_runtime_starts_the_plugin_ticks_and_stops_them_when_it_closes(tmp_path: Path):
    plugin = TickPlugin()
    rt = make_runtime(tmp_path, answering_provider(), extra=[(plugin, "probe_plugin")])
    assert rt.ticks.specs["probe"].plugin == "probe_plugin"
    await rt.start()
    assert rt.ticks.active == ["probe"]
    assert await rt.run_tick("probe") is True and plugin.seen == ["tick"]
    await rt.close()
    assert rt.ticks.active == []
