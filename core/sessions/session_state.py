"""The in-memory state of one session: transcript, loaded rare tools, known facts."""

from __future__ import annotations

from pathlib import Path

import attrs

from atomic_agent.sessions.transcript_entry import COMPACTION, TURN_FINISHED, TURN_STARTED, USER, TranscriptEntry


@attrs.define
class SessionState:
    """A long-lived chat. `status` is "pending" until `finish` ends the session."""

    id: str
    working_dir: Path
    created_at: str
    status: str = "pending"
    title: str = ""
    entries: list[TranscriptEntry] = attrs.field(factory=list)
    loaded_tools: list[str] = attrs.field(factory=list)  # most recently used last
    known_facts: list[str] = attrs.field(factory=list)
    updated_at: str = ""  # as stored when loaded (the last write to the session)

    @property
    def next_turn_index(self) -> int:
        # a compaction row carries the last turn it replaced, so numbering never restarts. Turn
        # indexes only grow along the transcript (a turn starts at one more than every earlier
        # one; a compaction sits below the rows it kept), so the newest such row decides.
        for entry in reversed(self.entries):
            if entry.kind in (TURN_STARTED, COMPACTION):
                return 1 + entry.turn_index
        return 0

    def load_tool(self, name: str, cap: int) -> list[str]:
        """Move `name` to the most-recent end; evict the least recent past `cap`. Returns evicted."""
        if name in self.loaded_tools:
            self.loaded_tools.remove(name)
        self.loaded_tools.append(name)
        evicted: list[str] = []
        while len(self.loaded_tools) > cap:
            evicted.append(self.loaded_tools.pop(0))
        return evicted

    def turn_summaries(self) -> list[dict[str, object]]:
        """Each turn's user text, state and reason (for `sessions show`)."""
        turns: dict[int, dict[str, object]] = {}
        for entry in self.entries:
            row = turns.setdefault(entry.turn_index, {"turn": entry.turn_index, "user": "", "state": "running",
                                                      "reason": None})
            if entry.kind == USER:
                row["user"] = entry.text
            elif entry.kind == TURN_FINISHED:
                row["state"], row["reason"] = entry.status, entry.reason
        return [turns[k] for k in sorted(turns)]
