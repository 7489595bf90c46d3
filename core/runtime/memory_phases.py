"""The registered memory phases, run by the runtime: around every turn (sections for the
prompt, `before_turn`, `after_turn` in the background) and on the consolidation tick.

A phase that raises is reported on stderr and skipped; it never fails a turn. The
consolidation tick calls every phase's `consolidate()` (the cold path) every
`agent.consolidationIntervalS` seconds while the runtime runs. One tick at a time: a tick
(timer or `run_once`) waits for the one in progress to end. Phases run in (order, name)
order; one that raises is reported and the next still runs, and the timer keeps ticking.
Closing the runtime cancels a tick in progress.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from atomic_agent.hook_records import MemoryPhase, PromptSection, TurnDigest, TurnStart, exchange_pairs, fit_sections
from atomic_agent.prompt.build_prompt import estimate_tokens

if TYPE_CHECKING:
    from atomic_agent.agent.agent_loop import TurnResult
    from atomic_agent.sessions.session_state import SessionState

OK = "ok"


class MemoryPhases:
    """The phases in (order, name) order, as a turn uses them."""

    def __init__(self, phases: Sequence[MemoryPhase]) -> None:
        self.phases = sorted(phases, key=lambda p: (p.order, p.name))
        self._background: set[asyncio.Task[Any]] = set()

    def sections(self, session_id: str, user_text: str) -> list[PromptSection]:
        sections: list[PromptSection] = []
        for phase in self.phases:
            if phase.sections is not None:
                try:
                    sections.extend(phase.sections(session_id, user_text))
                except Exception as exc:  # a broken memory read path drops its sections, never the turn
                    print(f"atomic-agent: memory phase {phase.name!r} sections failed: {type(exc).__name__}: {exc}",
                          file=sys.stderr)
        return fit_sections(sections, estimate_tokens)

    async def before_turn(self, session: SessionState, turn_index: int, text: str) -> None:
        """Every phase's `before_turn`, then every phase's `prepare_turn` (awaited)."""
        start = TurnStart(session.id, turn_index, text, str(session.working_dir),
                          exchange_pairs(session.entries, turn_index))
        for phase in self.phases:
            if phase.before_turn is not None:
                try:
                    phase.before_turn(start)
                except Exception as exc:
                    print(f"atomic-agent: memory phase {phase.name!r} before_turn failed: "
                          f"{type(exc).__name__}: {exc}", file=sys.stderr)
        for phase in self.phases:
            if phase.prepare_turn is not None:
                try:
                    await phase.prepare_turn(start)
                except Exception as exc:  # a failed preparation leaves the sections as they were
                    print(f"atomic-agent: memory phase {phase.name!r} prepare_turn failed: "
                          f"{type(exc).__name__}: {exc}", file=sys.stderr)

    def after_turn(self, session: SessionState, result: TurnResult, text: str) -> None:
        """Start every phase's `after_turn` in the background (awaited by `drain`)."""
        digest = TurnDigest(session.id, result.turn_index, text, result.reply, reason=result.reason,
                            history=exchange_pairs(session.entries, result.turn_index))
        for phase in self.phases:
            if phase.after_turn is not None:
                task = asyncio.ensure_future(phase.after_turn(digest))
                self._background.add(task)
                task.add_done_callback(self._background.discard)

    @property
    def busy(self) -> bool:
        """Some `after_turn` work is still running."""
        return bool(self._background)

    async def drain(self) -> None:
        """Wait for the `after_turn` work still running (at close)."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)


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
