"""What a start does not do: a one-shot runtime (`serving=False`, the `run` command) builds no
channel, tick or consolidation timer; the server-facts round trip starts with the turn and is
shared with the first step (one planning, never two); a warm-up that fails fails the first
step as a plan would; and the tasks plugin recovers stale rows when its service is first
built, not at every start."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.llm.provider_protocol import ProviderUnavailableError
from atomic_agent.runtime.runtime import create_runtime
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.runtime.test_runtime_plugin_contract import Recorder, boot_with


class CountingProvider(ScriptedProvider):
    """Counts the server-facts round trips; `fail` makes them raise like an unreachable server."""

    def __init__(self, *args: Any, fail: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.describes = 0
        self.fail = fail

    async def describe(self) -> dict[str, object]:
        self.describes += 1
        await asyncio.sleep(0.01)  # a round trip: the admission runs meanwhile
        if self.fail:
            raise ProviderUnavailableError("connection refused (test)")
        return await super().describe()


async def test_a_one_shot_runtime_starts_no_channel(tmp_path: Path) -> None:
    log: list[str] = []
    ctx = boot_with(tmp_path, {"recorder": Recorder(log, channels=("chan.a",))})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([]))
    result = await runtime.run_turn("hello", working_dir=tmp_path)
    assert result.status == "done"
    assert runtime.channels.running == {} and runtime.ticks.active == []
    await runtime.close()
    assert "chan.a started" not in log and log[:2] == ["service built", "runtime_started"]


async def test_the_warm_up_planning_is_shared_with_the_first_step(tmp_path: Path) -> None:
    provider = CountingProvider([calls(("reply", {"text": "hi"}))])
    runtime = await create_runtime(boot_context=boot_with(tmp_path, {}), provider=provider)
    result = await runtime.run_turn("hello", working_dir=tmp_path)
    again = await runtime.run_turn("and again", session_id=result.session_id)
    assert (result.status, again.status) == ("done", "done")
    assert provider.describes == 1  # planned once, while the first turn was being admitted
    await runtime.close()


async def test_a_failed_warm_up_fails_the_first_step_as_a_transport_failure(tmp_path: Path) -> None:
    provider = CountingProvider([calls(("reply", {"text": "hi"}))], fail=True)
    runtime = await create_runtime(boot_context=boot_with(tmp_path, {}), provider=provider)
    result = await runtime.run_turn("hello", working_dir=tmp_path)
    assert result.status == "failed" and result.category == "transport"
    provider.fail = False
    retried = await runtime.run_turn("hello again", session_id=result.session_id)
    assert retried.status == "done"  # the failed planning is not kept: the next step plans again
    await runtime.close()


async def test_closing_before_any_step_cancels_the_warm_up(tmp_path: Path) -> None:
    runtime = await create_runtime(boot_context=boot_with(tmp_path, {}), provider=CountingProvider([]))
    runtime.warm_plan()
    planning = runtime._planning
    await runtime.close()
    assert planning is not None and planning.cancelled()


async def test_runtime_started_fires_on_start_not_on_construction(tmp_path: Path) -> None:
    """A runtime only built (to list its tools, to show `plugins`) starts no plugin; `start()`
    fires runtime_started once, and only a started runtime fires runtime_stopping."""
    from atomic_agent.runtime.runtime import Runtime

    log: list[str] = []
    built = Runtime(boot_with(tmp_path / "a", {"recorder": Recorder(log)}), provider=ScriptedProvider([]))
    assert "runtime_started" not in log
    await built.close()
    assert "runtime_started" not in log and "runtime_stopping" not in log

    started = Runtime(boot_with(tmp_path / "b", {"recorder": Recorder(log)}), provider=ScriptedProvider([]))
    await started.start(serving=False)
    await started.start(serving=False)
    await started.close()
    assert log.count("runtime_started") == 1 and log.count("runtime_stopping") == 1

    used = Runtime(boot_with(tmp_path / "c", {"recorder": Recorder(log)}), provider=ScriptedProvider([]))
    await used.run_turn("hello", working_dir=tmp_path)  # a runtime that runs a turn has started
    await used.close()
    assert log.count("runtime_started") == 2 and log.count("runtime_stopping") == 2
