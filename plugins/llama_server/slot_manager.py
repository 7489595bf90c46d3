"""Which llama-server slot each session's completions use, so every session keeps its own KV cache.

llama-server wraps an out-of-range `id_slot` modulo the slot count without complaint, which
would silently make two sessions evict each other's cache; so this class only ever hands out
ids in `0..total_slots-1`, or -1 ("server picks") where no slot can be reserved.
"""

from __future__ import annotations

from collections import OrderedDict

SESSIONS_KEPT = 4096  # assignments remembered; a server that starts a session per request must not grow for ever


class SlotManager:
    """Main slots for sessions plus one reflection slot.

    With two or more slots and `reserve_reflection`, the last slot is kept for reflection and
    other background calls, and sessions share the rest. A session gets its main slot on its
    very first step and keeps it until `release`. With a single slot, sessions use slot 0 and
    reflection gets -1, since there is nothing left to reserve. At most `max_sessions`
    assignments are remembered: the least recently used is forgotten (its session, if it ever
    comes back, gets a slot again — the same rule, so usually the same one).
    """

    def __init__(self, total_slots: int, reserve_reflection: bool = True, max_sessions: int = SESSIONS_KEPT) -> None:
        if not isinstance(total_slots, int) or total_slots < 1:
            raise ValueError(f"total_slots must be an integer >= 1 (llama-server --parallel), got {total_slots!r}")
        self.total_slots = total_slots
        reserved = reserve_reflection and total_slots >= 2
        self._reflection = total_slots - 1 if reserved else -1
        self._main_slots = tuple(range(total_slots - 1 if reserved else total_slots))
        self._assigned: OrderedDict[str, int] = OrderedDict()  # least recently used first
        self._load = dict.fromkeys(self._main_slots, 0)  # sessions per main slot
        self.max_sessions = max_sessions

    @property
    def main_slots(self) -> tuple[int, ...]:
        return self._main_slots

    def main_slot(self, session_id: str) -> int:
        """The session's slot, assigned on first call: the main slot holding the fewest live
        sessions, lowest id on a tie, so the choice is deterministic."""
        slot = self._assigned.get(session_id)
        if slot is not None:
            self._assigned.move_to_end(session_id)
            return slot
        slot = min(self._main_slots, key=lambda s: (self._load[s], s))
        self._assigned[session_id] = slot
        self._load[slot] += 1
        while len(self._assigned) > self.max_sessions:
            _, forgotten = self._assigned.popitem(last=False)
            self._load[forgotten] -= 1
        return slot

    def reflection_slot(self) -> int:
        """The reserved background slot, or -1 when only one slot exists (or none is reserved)."""
        return self._reflection

    def release(self, session_id: str) -> None:
        """Forget the session's slot (the session ended); unknown ids are ignored."""
        slot = self._assigned.pop(session_id, None)
        if slot is not None:
            self._load[slot] -= 1

    def assignments(self) -> dict[str, int]:
        """A copy of the live session -> slot map (for status output and tests)."""
        return dict(self._assigned)
