"""The registered memory phases, run by the runtime: around every turn (sections for the
prompt, `before_turn`, `after_turn` in the background) and on the consolidation tick.

A phase that raises is reported on stderr and skipped; it never fails a turn.
`consolidate()` calls every phase's `consolidate()` (the cold path) in (order, name) order;
one that raises is reported and the next still runs. The runtime runs it as the tick
`memory.consolidate` among the plugins' ticks (one timer engine, `background_work.PluginTicks`)
every `agent.consolidationIntervalS` seconds; one consolidation at a time, whether the timer
or `Runtime.consolidate_now` asked.
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
CONSOLIDATION_TICK = "memory.consolidate"


class MemoryPhases:
    """The phases in (order, name) order, as a turn uses them."""

    def __init__(self, phases: Sequence[MemoryPhase]) -> None:
        self.phases = sorted(phases, key=lambda p: (p.order, p.name))
        self._background: set[asyncio.Task[Any]] = set()
        self._consolidating: asyncio.Lock | None = None
        self.consolidations = 0

    @property
    def consolidate_any(self) -> bool:
        """Some phase has a cold path (otherwise there is no consolidation tick)."""
        return any(phase.consolidate is not None for phase in self.phases)

    async def consolidate(self) -> dict[str, str]:
        """One consolidation now, after the one in progress; each phase's outcome ("ok" or the error)."""
        if self._consolidating is None:
            self._consolidating = asyncio.Lock()
        async with self._consolidating:
            outcomes: dict[str, str] = {}
            for phase in self.phases:
                if phase.consolidate is None:
                    continue
                try:
                    await phase.consolidate()
                    outcomes[phase.name] = OK
                except Exception as exc:
                    outcomes[phase.name] = f"{type(exc).__name__}: {exc}"
                    print(f"atomic-agent: memory phase {phase.name!r} consolidate failed: {outcomes[phase.name]}",
                          file=sys.stderr)
            self.consolidations += 1
            return outcomes

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

    def turn_notices(self, session_id: str, turn_index: int) -> list[tuple[str, str]]:
        """Every phase's notices for the person as the turn ends: (phase name, text) pairs."""
        notices: list[tuple[str, str]] = []
        for phase in self.phases:
            if phase.turn_notices is not None:
                try:
                    notices.extend((phase.name, str(text)) for text in phase.turn_notices(session_id, turn_index)
                                   if str(text).strip())
                except Exception as exc:  # a broken notice shows nothing, never fails the turn
                    print(f"atomic-agent: memory phase {phase.name!r} turn_notices failed: "
                          f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return notices

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
