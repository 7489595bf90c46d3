"""What plugins run in the background of a runtime: their channels and their periodic ticks.

Both are started after `runtime_started` and stopped before `runtime_stopping` (so before
the services they use are closed), and a failure stays with the channel or tick it came from.

Channels (`register_channels`): built and started in name order, stopped newest first; one
whose factory, `start` or `stop` raises is reported and the others keep running.

Ticks (`register_ticks`, and the memory phases' consolidation as `memory.consolidate`), the
runtime's one place for timers: each has its own loop — wait `interval_s`, then await `run()`. A tick is never entered
again while it runs (`run_once` from a command or test waits for the one in progress), an
error is counted in `errors[name]`, reported on stderr and swallowed so the timer keeps
ticking, and `stop()` cancels every loop (and a tick in progress).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from atomic_agent.hook_records import Channel, ChannelSpec, TickSpec
from atomic_agent.plugin_host.collect_registrations import report_failure
from atomic_agent.plugin_host.plugin_host import PluginHost


class ChannelRunner:
    def __init__(self, host: PluginHost, specs: Sequence[ChannelSpec]) -> None:
        self._host = host
        self.specs = list(specs)
        self.running: dict[str, Channel] = {}
        self.failed: dict[str, str] = {}  # channel name -> what went wrong

    async def start_all(self, runtime: Any) -> None:
        """Build and start every channel in name order; one that raises is reported and left
        out, the others start."""
        for spec in self.specs:
            if spec.name in self.running:
                continue
            try:
                channel = spec.factory(runtime)
                await channel.start()
            except Exception as exc:
                self.failed[spec.name] = f"{type(exc).__name__}: {exc}"
                report_failure(self._host, spec.plugin, f"channel {spec.name!r} start", exc, "it is not running")
                continue
            self.running[spec.name] = channel

    async def stop_all(self) -> None:
        """Stop the running channels, newest first; a failing stop is reported, the rest stop."""
        for name in reversed(list(self.running)):
            channel = self.running.pop(name)
            try:
                await channel.stop()
            except Exception as exc:
                print(f"atomic-agent: channel {name!r} failed to stop: {type(exc).__name__}: {exc}",
                      file=sys.stderr)

    def status(self) -> dict[str, dict[str, Any]]:
        """Each registered channel: running (with its own status) or failed (with the error)."""
        out: dict[str, dict[str, Any]] = {}
        for spec in self.specs:
            if spec.name in self.running:
                try:
                    detail = dict(self.running[spec.name].status())
                except Exception as exc:
                    detail = {"statusError": f"{type(exc).__name__}: {exc}"}
                out[spec.name] = {"state": "running", **detail}
            elif spec.name in self.failed:
                out[spec.name] = {"state": "failed", "error": self.failed[spec.name]}
            else:
                out[spec.name] = {"state": "stopped"}
        return out


class PluginTicks:
    def __init__(self, specs: Sequence[TickSpec]) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self._locks: dict[str, asyncio.Lock] = {}
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self.ticks: dict[str, int] = {name: 0 for name in self.specs}
        self.errors: dict[str, int] = {name: 0 for name in self.specs}

    @property
    def active(self) -> list[str]:
        return sorted(name for name, task in self._tasks.items() if not task.done())

    async def run_once(self, name: str) -> bool:
        """Run tick `name` now (after the one in progress); False when it raised."""
        spec = self.specs[name]
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:
            try:
                await spec.run()
                return True
            except Exception as exc:
                self.errors[name] += 1
                print(f"atomic-agent: tick {name!r} of plugin {spec.plugin!r} failed: {type(exc).__name__}: {exc}",
                      file=sys.stderr)
                return False
            finally:
                self.ticks[name] += 1

    def start(self) -> None:
        for name, spec in self.specs.items():
            if name not in self._tasks or self._tasks[name].done():
                self._tasks[name] = asyncio.ensure_future(self._every_interval(name, spec.interval_s))

    async def _every_interval(self, name: str, interval_s: float) -> None:
        while True:
            await asyncio.sleep(interval_s)
            await self.run_once(name)

    async def stop(self) -> None:
        tasks, self._tasks = list(self._tasks.values()), {}
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
