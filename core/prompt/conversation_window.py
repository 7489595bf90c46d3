"""The conversation section of a long session without rendering all of it every step.

The section shows the newest turns that fit its token cap and one line counting the older
ones (pack_conversation). Only the turns up to the first one that does not fit can matter,
so they are rendered here — a window of the newest turns, widened until it reaches a turn
that does not fit or the start of the transcript — and the turns before the window are
only counted. The count comes from a per-session index of where each turn's rows start,
kept between steps and extended by the rows appended since, so a step costs the same at
turn 10,000 as at turn 10. The section's bytes are exactly what rendering every turn and
packing them gives.

The index relies on the transcript's order: turn indexes never decrease along it (a turn
starts at one more than every earlier one, a compaction row sits below the rows it kept).
A transcript that breaks that order, or an index that no longer matches the rows (a
compaction or repair rewrote them), is rendered whole or re-indexed from the start.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence

import attrs

from atomic_agent.prompt.conversation_lines import NO_CAP, Fold, lines_by_turn
from atomic_agent.prompt.pack_conversation import Older, pack_conversation
from atomic_agent.sessions.transcript_entry import COMPACTION, FAILURE_NOTE, REPLY, TOOL_CALL, TOOL_RESULT, USER, \
    TranscriptEntry

LINE_KINDS = frozenset((USER, TOOL_CALL, TOOL_RESULT, REPLY, FAILURE_NOTE))  # rows that render as a line
INDEXED_SESSIONS = 16  # sessions whose turn index is kept between steps (least recently used dropped)
FIRST_WINDOW = 8  # turns rendered first; doubled until the window holds a turn that does not fit


@attrs.define
class TurnStarts:
    """Where each turn's rows start in one session's transcript, as far as it was scanned."""

    first: TranscriptEntry | None = None  # entries[0] when indexed (a rewrite changes it or `last`)
    last: TranscriptEntry | None = None  # entries[scanned - 1]
    scanned: int = 0
    turns: list[int] = attrs.field(factory=list)  # turn index of each group of rows, ascending
    starts: list[int] = attrs.field(factory=list)  # position of each group's first row
    lines_before: list[int] = attrs.field(factory=list)  # turns with a conversation line before each group
    has_lines: list[bool] = attrs.field(factory=list)
    compaction: int = -1  # position of the newest compaction row
    ordered: bool = True

    def matches(self, entries: Sequence[TranscriptEntry]) -> bool:
        """True when `entries` still starts with the rows this index was built from."""
        if self.scanned > len(entries):
            return False
        if self.scanned == 0:
            return True
        if entries[0] != self.first or entries[self.scanned - 1] != self.last:
            return False
        start = self.starts[-1]  # the newest group still starts where it did
        return entries[start].turn_index == self.turns[-1] and (start == 0 or
                                                                 entries[start - 1].turn_index < self.turns[-1])

    def extend(self, entries: Sequence[TranscriptEntry]) -> None:
        for position in range(self.scanned, len(entries)):
            entry = entries[position]
            if self.turns and entry.turn_index < self.turns[-1]:
                self.ordered = False  # not the order the window relies on: callers render whole
            if not self.turns or entry.turn_index > self.turns[-1]:
                self.lines_before.append(self.lines_before[-1] + self.has_lines[-1] if self.turns else 0)
                self.turns.append(entry.turn_index)
                self.starts.append(position)
                self.has_lines.append(False)
            if entry.kind in LINE_KINDS:
                self.has_lines[-1] = True
            elif entry.kind == COMPACTION:
                self.compaction = position
        if entries:
            self.first, self.last = entries[0], entries[-1]
        self.scanned = len(entries)

    def older(self, group: int) -> Older:
        """The turns before group `group` that have a conversation line: how many, and the
        first and last of their turn indexes."""
        count = self.lines_before[group]
        if count == 0:
            return Older()
        first = next(self.turns[i] for i in range(group) if self.has_lines[i]) if count < group else self.turns[0]
        last = next(self.turns[i] for i in range(group - 1, -1, -1) if self.has_lines[i])
        return Older(count, first, last)


class ConversationIndex:
    """Turn indexes of the sessions a process builds prompts for (bounded, least recently used out)."""

    def __init__(self, size: int = INDEXED_SESSIONS) -> None:
        self.size = size
        self._sessions: OrderedDict[str, TurnStarts] = OrderedDict()

    def for_entries(self, session_id: str, entries: Sequence[TranscriptEntry]) -> TurnStarts:
        index = self._sessions.get(session_id)
        if index is None or not index.matches(entries):
            index = TurnStarts()
        index.extend(entries)
        self._sessions[session_id] = index
        self._sessions.move_to_end(session_id)
        while len(self._sessions) > self.size:
            self._sessions.popitem(last=False)
        return index


SHARED_INDEX = ConversationIndex()


def latest_compaction_text(index: TurnStarts, entries: Sequence[TranscriptEntry]) -> str:
    return entries[index.compaction].text if index.compaction >= 0 else ""


def pack_recent_turns(entries: Sequence[TranscriptEntry], index: TurnStarts, cap_tokens: int,
                      count: Callable[[str], int], batch_char_cap: int = NO_CAP,
                      fold: Fold | None = None) -> Callable[[int], tuple[list[str], int]]:
    """A packer for this step: `pack(cap)` gives (lines, dropped turns) for any cap up to
    `cap_tokens`, from a window of recent turns rendered once."""
    if not index.ordered:
        turns = lines_by_turn(entries, batch_char_cap, fold)
        return lambda cap: pack_conversation(turns, cap, count)
    groups = len(index.turns)
    width = FIRST_WINDOW
    while True:
        first_group = max(0, groups - width)
        start = index.starts[first_group] if groups else 0
        turns = lines_by_turn(entries[start:], batch_char_cap, fold)
        if first_group == 0:
            older = Older()
            break
        _, dropped = pack_conversation(turns, cap_tokens, count)
        if dropped:  # the window reaches a turn that does not fit: nothing older can be shown
            older = index.older(first_group)
            break
        width *= 2
    return lambda cap: pack_conversation(turns, cap, count, older)

