"""The consolidation tick: the runtime calls every memory phase's `consolidate()` (the cold
path) every `agent.consolidationIntervalS` seconds while it runs.

One tick at a time: a tick (timer or `run_once`) waits for the one in progress to end.
Phases run in (order, name) order; one that raises is reported and the next still runs,
and the timer keeps ticking. Closing the runtime cancels a tick in progress.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import Any

from atomic_agent.records.memory_phase import MemoryPhase

OK = "ok"


class ConsolidationTick:
    def __init__(self, phases: Sequence[MemoryPhase], interval_s: float) -> None:
        self._phases = [phase for phase in phases if phase.consolidate is not None]
        self.interval_s = interval_s
        self._lock: asyncio.Lock | None = None
        self._task: asyncio.Task[Any] | None = None
        self.ticks = 0

    @property
    def active(self) -> bool:
        return self._task is not None and not self._task.done()

    async def run_once(self) -> dict[str, str]:
        """One tick now; each phase's outcome ("ok" or the error)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            outcomes: dict[str, str] = {}
            for phase in self._phases:
                assert phase.consolidate is not None
                try:
                    await phase.consolidate()
                    outcomes[phase.name] = OK
                except Exception as exc:
                    outcomes[phase.name] = f"{type(exc).__name__}: {exc}"
                    print(f"atomic-agent: memory phase {phase.name!r} consolidate failed: {outcomes[phase.name]}",
                          file=sys.stderr)
            self.ticks += 1
            return outcomes

    def start(self) -> None:
        """Start the timer (nothing to do with interval 0 or no phase that consolidates)."""
        if self.interval_s > 0 and self._phases and not self.active:
            self._task = asyncio.ensure_future(self._every_interval())

    async def _every_interval(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            await self.run_once()

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
