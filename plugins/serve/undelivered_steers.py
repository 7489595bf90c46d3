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

Each entry carries the runtime's `steerId` for the stored copy (kept until acknowledged):
an entry leaving by the DELETE cursor or by eviction is reported to `on_drop`, which the
server wires to `runtime.dismiss_steer`.
"""

from __future__ import annotations

import sys
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence

import attrs

MAX_PARKED_STEERS = 64
MAX_PARKED_SESSIONS = 256


@attrs.frozen
class ParkedSteer:
    seq: int
    text: str
    turn_index: int | None
    parked_at: float
    steer_id: str | None = None  # the runtime's stored copy (dismissed once acknowledged)

    def view(self) -> dict[str, object]:
        view: dict[str, object] = {"seq": self.seq, "text": self.text, "turnIndex": self.turn_index,
                                   "parkedAt": self.parked_at}
        if self.steer_id:
            view["steerId"] = self.steer_id
        return view


@attrs.define
class _Box:
    entries: list[ParkedSteer] = attrs.field(factory=list)
    discarded: int = 0


class UndeliveredSteerStore:
    def __init__(self, max_steers: int = MAX_PARKED_STEERS, max_sessions: int = MAX_PARKED_SESSIONS,
                 on_drop: Callable[[str], object] | None = None) -> None:
        self.on_drop = on_drop
        self.max_steers = max_steers
        self.max_sessions = max_sessions
        self._boxes: OrderedDict[str, _Box] = OrderedDict()
        self._seq = 0  # store-wide, so a cursor from a purged box can never match a newer entry

    def park(self, session_id: str, texts: list[str] | tuple[str, ...], turn_index: int | None,
             steer_ids: Sequence[str] = ()) -> list[ParkedSteer]:
        """Park a hand-back; returns it whole, each message with its seq (and stored steer id)."""
        if not texts:
            return []
        box = self._boxes.pop(session_id, None) or _Box()
        self._boxes[session_id] = box  # most recently parked last
        now = time.time()
        batch = []
        ids = list(steer_ids) + [""] * (len(texts) - len(steer_ids))
        for text, steer_id in zip(texts, ids, strict=False):  # ids beyond the texts name nothing
            self._seq += 1
            batch.append(ParkedSteer(self._seq, text, turn_index, now, steer_id or None))
        overflow = len(box.entries) + len(batch) - self.max_steers
        if overflow > 0:
            evicted = min(overflow, len(box.entries))
            self._dropped(box.entries[:evicted])
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
            self._dropped([e for e in box.entries if e.seq <= through])
            box.entries = [e for e in box.entries if e.seq > through]
        if discarded is not None:
            box.discarded = max(0, box.discarded - discarded)
        remaining = (len(box.entries), box.discarded)
        if remaining == (0, 0):
            del self._boxes[session_id]
        return remaining

    def _dropped(self, entries: list[ParkedSteer]) -> None:
        """The host is done with these (acknowledged, or evicted and counted as discarded)."""
        if self.on_drop is None:
            return
        for entry in entries:
            if entry.steer_id:
                try:
                    self.on_drop(entry.steer_id)
                except Exception as exc:  # the stored copy stays; recovery requeues it after a restart
                    print(f"atomic-agent serve: could not dismiss steer {entry.steer_id}: "
                          f"{type(exc).__name__}: {exc}", file=sys.stderr)

    def forget_steer(self, session_id: str, steer_id: str) -> None:
        """The host re-sent this steer as a turn (its stored copy was consumed by that
        admission): the parked entry goes, without a dismissal."""
        box = self._boxes.get(session_id)
        if box is None:
            return
        box.entries = [e for e in box.entries if e.steer_id != steer_id]
        if not box.entries and not box.discarded:
            del self._boxes[session_id]

    def drop_session(self, session_id: str) -> None:
        self._boxes.pop(session_id, None)

    def sessions(self) -> list[str]:
        return list(self._boxes)
