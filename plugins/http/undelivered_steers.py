"""Steers a turn accepted but ended without folding in, parked until a host acknowledges them.

A steer is answered long before its turn closes, often to another client than the one
that owns the turn, so the hand-back is parked here on every path (success, failure,
exception) and read with GET /api/sessions/{id}/steer. Reads never consume; a host
acknowledges by cursor (`through` = the last seq it handled) so a steer parked between
its read and its ack survives, and acknowledges the loss count (`discarded`) separately,
because evicted messages have no seq it was ever shown.

Per-server and in memory, like the inbox it drains: bounded by MAX_PARKED_STEERS per
session (evicting only entries from earlier hand-backs — a hand-back is kept whole, it
is the payload that reports the messages) and MAX_PARKED_SESSIONS sessions (the box
parked longest ago goes first).
"""

from __future__ import annotations

import time
from collections import OrderedDict

import attrs

MAX_PARKED_STEERS = 64
MAX_PARKED_SESSIONS = 256


@attrs.frozen
class ParkedSteer:
    seq: int
    text: str
    turn_index: int | None
    parked_at: float

    def view(self) -> dict[str, object]:
        return {"seq": self.seq, "text": self.text, "turnIndex": self.turn_index, "parkedAt": self.parked_at}


@attrs.define
class _Box:
    entries: list[ParkedSteer] = attrs.field(factory=list)
    discarded: int = 0


class UndeliveredSteerStore:
    def __init__(self, max_steers: int = MAX_PARKED_STEERS, max_sessions: int = MAX_PARKED_SESSIONS) -> None:
        self.max_steers = max_steers
        self.max_sessions = max_sessions
        self._boxes: OrderedDict[str, _Box] = OrderedDict()
        self._seq = 0  # store-wide, so a cursor from a purged box can never match a newer entry

    def park(self, session_id: str, texts: list[str] | tuple[str, ...], turn_index: int | None) -> list[ParkedSteer]:
        """Park a hand-back; returns it whole, each message with its seq."""
        if not texts:
            return []
        box = self._boxes.pop(session_id, None) or _Box()
        self._boxes[session_id] = box  # most recently parked last
        now = time.time()
        batch = []
        for text in texts:
            self._seq += 1
            batch.append(ParkedSteer(self._seq, text, turn_index, now))
        overflow = len(box.entries) + len(batch) - self.max_steers
        if overflow > 0:
            evicted = min(overflow, len(box.entries))
            del box.entries[:evicted]
            box.discarded += evicted
        box.entries.extend(batch)
        while len(self._boxes) > self.max_sessions:
            self._boxes.popitem(last=False)
        return batch

    def read(self, session_id: str) -> tuple[list[ParkedSteer], int]:
        box = self._boxes.get(session_id)
        return ([], 0) if box is None else (list(box.entries), box.discarded)

    def ack(self, session_id: str, through: int | None, discarded: int | None) -> tuple[int, int]:
        """Drop entries up to seq `through` and `discarded` from the loss count; returns what remains."""
        box = self._boxes.get(session_id)
        if box is None:
            return 0, 0
        if through is not None:
            box.entries = [e for e in box.entries if e.seq > through]
        if discarded is not None:
            box.discarded = max(0, box.discarded - discarded)
        remaining = (len(box.entries), box.discarded)
        if remaining == (0, 0):
            del self._boxes[session_id]
        return remaining

    def drop_session(self, session_id: str) -> None:
        self._boxes.pop(session_id, None)

    def sessions(self) -> list[str]:
        return list(self._boxes)
