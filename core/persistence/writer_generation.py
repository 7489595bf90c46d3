"""Writer generations: every body or progress write of a turn is conditional on the turn's
current generation, so a stale stream or retry can never change a finalized answer.

The turn's generation lives under one key (`writer.<turn id>`) as
`{"generation": n, "state": "running" | "final", ...}`. Starting a writer, fencing out the
current one (recovery marking a turn interrupted) and finalizing are compare-and-set steps on
that key; a write checks it inside the same transaction as the write itself, which makes the
check and the write one atomic step on every backend.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import attrs

from atomic_agent.persistence.key_space import key_path
from atomic_agent.persistence.persistence_errors import StaleWriterError
from atomic_agent.persistence.store_protocol import Store, StoreReader, Transaction

WRITER_PREFIX = "writer"
RUNNING = "running"
FINAL = "final"


@attrs.frozen
class WriterTicket:
    """What a writer holds: the turn and the generation it was given."""

    turn_id: str
    generation: int


@attrs.frozen
class GenerationState:
    generation: int
    state: str
    outcome: str | None = None
    response_hash: str | None = None


class WriterGenerations:
    def __init__(self, prefix: str = WRITER_PREFIX) -> None:
        self.prefix = prefix

    def key(self, turn_id: str) -> str:
        return key_path(self.prefix, turn_id)

    @staticmethod
    def _state(value: Any) -> GenerationState | None:
        return None if value is None else GenerationState(**value)

    async def state(self, reader: StoreReader, turn_id: str) -> GenerationState | None:
        return self._state(await reader.get(self.key(turn_id)))

    async def start_writer(self, tx: Transaction, turn_id: str) -> WriterTicket:
        """A new, higher generation for `turn_id`; every earlier ticket becomes stale. Refused
        once the turn is final."""
        key = self.key(turn_id)
        current = await tx.get(key)
        held = self._state(current)
        if held is not None and held.state == FINAL:
            raise StaleWriterError(f"turn {turn_id!r} is already final ({held.outcome}); it takes no new writer")
        generation = 1 if held is None else held.generation + 1
        new = attrs.asdict(GenerationState(generation, RUNNING))
        won = (await tx.write_if_absent(key, new) if current is None
               else await tx.compare_and_set(key, current, new))
        if not won:  # only possible on a backend whose transaction is not serialisable
            raise StaleWriterError(f"another writer of turn {turn_id!r} started at the same moment")
        return WriterTicket(turn_id, generation)

    async def fence(self, tx: Transaction, turn_id: str) -> int:
        """Bump the generation with no writer behind it (recovery interrupting a turn whose
        owner died): a zombie writer's next write is refused. Returns the new generation."""
        return (await self.start_writer(tx, turn_id)).generation

    async def is_current(self, reader: StoreReader, ticket: WriterTicket) -> bool:
        held = await self.state(reader, ticket.turn_id)
        return held is not None and held.state == RUNNING and held.generation == ticket.generation

    async def require_current(self, tx: Transaction, ticket: WriterTicket) -> None:
        """Compare-and-set the generation key onto itself: succeeds only while `ticket` is the
        running generation. Raises StaleWriterError otherwise. A write rather than a read on
        purpose: on a backend with row locks (PostgreSQL at READ COMMITTED) the update holds the
        row until commit, so no finalizer can slip in between this check and the caller's write."""
        expected = attrs.asdict(GenerationState(ticket.generation, RUNNING))
        if not await tx.compare_and_set(self.key(ticket.turn_id), expected, expected):
            held = await self.state(tx, ticket.turn_id)
            now = "absent" if held is None else f"generation {held.generation}, {held.state}"
            raise StaleWriterError(f"writer generation {ticket.generation} of turn {ticket.turn_id!r} is stale "
                                   f"(the turn is now {now}); the write was refused")

    async def finalize(self, tx: Transaction, ticket: WriterTicket, outcome: str,
                       response_hash: str | None = None) -> None:
        """The one finalizer: moves the current generation to final with its outcome and the
        hash of the visible response. Raises StaleWriterError if `ticket` is not current."""
        key = self.key(ticket.turn_id)
        expected = attrs.asdict(GenerationState(ticket.generation, RUNNING))
        final = attrs.asdict(GenerationState(ticket.generation, FINAL, outcome, response_hash))
        if not await tx.compare_and_set(key, expected, final):
            await self.require_current(tx, ticket)  # raises with the reason

    @asynccontextmanager
    async def write_as(self, store: Store, ticket: WriterTicket, durable: bool = False) -> AsyncIterator[Transaction]:
        """A transaction that only exists for the current writer: it checks the generation first,
        so everything written inside commits only if `ticket` is still current."""
        async with store.transaction(durable=durable) as tx:
            await self.require_current(tx, ticket)
            yield tx
