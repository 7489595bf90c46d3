"""The writer fence of a running turn: a transcript write lands only while its turn is still
running under the generation the writer was given.

The check runs inside the writing transaction (after BEGIN IMMEDIATE took the write lock),
so no finalizer or recovery can slip between the check and the write.
"""

from __future__ import annotations

import sqlite3

import attrs

from atomic_agent.sessions.store_errors import StaleWriterError


@attrs.frozen
class TurnGuard:
    """What a turn's writer holds: its turn and the generation it was started with."""

    turn_id: str
    generation: int


def check_writer_guard(conn: sqlite3.Connection, guard: TurnGuard) -> None:
    """Raise StaleWriterError unless the turn is running at exactly `guard.generation`."""
    row = conn.execute("select state, generation from turns where turn_id = ?", [guard.turn_id]).fetchone()
    if row is None:
        raise StaleWriterError(f"turn {guard.turn_id} is not in the ledger; the write was refused")
    state, generation = row
    if state != "running" or generation != guard.generation:
        raise StaleWriterError(f"turn {guard.turn_id} is {state} at generation {generation}; a writer of "
                               f"generation {guard.generation} can no longer change it")
