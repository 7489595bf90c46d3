"""The periodic work plugins register (`register_ticks`): the runtime's one place for timers
besides the consolidation tick.

Each tick has its own loop: wait `interval_s`, then await `run()`. A tick is never entered
again while it runs (`run_once` from a command or test waits for the one in progress), an
error is counted in `errors[name]`, reported on stderr and swallowed so the timer keeps
ticking, and `stop()` cancels every loop (and a tick in progress) before the services the
ticks use are closed.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from atomic_agent.hook_records import TickSpec


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
