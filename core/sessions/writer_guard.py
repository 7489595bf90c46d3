"""The writer fence of a running turn: a transcript write lands only while its turn is still
running under the generation the writer was given.

The store reads the turn inside the writing transaction (under the write lock), so no
finalizer or recovery can slip between the check and the write; this module holds what the
writer carries and the verdict every backend gives on what it read.
"""

from __future__ import annotations

import attrs

from atomic_agent.sessions.store_errors import StaleWriterError


@attrs.frozen
class TurnGuard:
    """What a turn's writer holds: its turn and the generation it was started with."""

    turn_id: str
    generation: int


def require_running(guard: TurnGuard, found: tuple[str, int] | None) -> None:
    """Raise StaleWriterError unless `found` (the turn's stored state and generation, None
    when the ledger has no such turn) is running at exactly `guard.generation`."""
    if found is None:
        raise StaleWriterError(f"turn {guard.turn_id} is not in the ledger; the write was refused")
    state, generation = found
    if state != "running" or generation != guard.generation:
        raise StaleWriterError(f"turn {guard.turn_id} is {state} at generation {generation}; a writer of "
                               f"generation {guard.generation} can no longer change it")
