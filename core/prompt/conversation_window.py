"""The conversation section of a long session without rendering all of it every step.

The section shows the newest turns that fit its token cap and one line counting the older
ones (pack_conversation). Only the turns up to the first one that does not fit can matter,
so only they are looked at — walking back from the newest turn until one does not fit —
and the turns before are only counted. The count comes from a per-session index of where
each turn's rows start, kept between steps and extended by the rows appended since; each
settled turn's lines and token cost are kept in it too (a turn's lines change only while
rows are still appended to it or while it holds the newest tool batch, shown unfolded), so
a step renders one or two turns however long the session and however many turns fit. The
section's bytes are exactly what rendering every turn and packing them gives.

The index relies on the transcript's order: turn indexes never decrease along it (a turn
starts at one more than every earlier one, a compaction row sits below the rows it kept).
A transcript that breaks that order, or an index that no longer matches the rows (a
compaction or repair rewrote them), is rendered whole or re-indexed from the start.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence

import attrs

from atomic_agent.prompt.conversation_lines import NO_CAP, Batch, Fold, lines_by_turn
from atomic_agent.prompt.pack_conversation import Older, pack_conversation, turn_cost
from atomic_agent.sessions.transcript_entry import (
    COMPACTION,
    FAILURE_NOTE,
    REPLY,
    TOOL_CALL,
    TOOL_RESULT,
    USER,
    TranscriptEntry,
)

LINE_KINDS = frozenset((USER, TOOL_CALL, TOOL_RESULT, REPLY, FAILURE_NOTE))  # rows that render as a line
INDEXED_SESSIONS = 16  # sessions whose turn index is kept between steps (least recently used dropped)


@attrs.frozen
class RenderedTurn:
    """One settled turn's conversation lines and their token cost, as rendered while the
    newest batch was `newest` (it matters only when that batch is in this turn)."""

    turn_index: int
    lines: list[str]
    cost: int
    newest: Batch | None


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
    newest_result: int = -1  # position of the newest tool result (its batch is shown unfolded)
    ordered: bool = True
    # settled turns' lines per render key (what else the lines depend on), then per group
    rendered: dict[Hashable, dict[int, RenderedTurn | None]] = attrs.field(factory=dict)

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
            if entry.kind == COMPACTION:
                self.compaction = position
            elif entry.kind == TOOL_RESULT:
                self.newest_result = position
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
    """Turn indexes of the sessions a runtime builds prompts for (bounded, least recently used
    out). The runtime owns one and hands it to every step; a prompt built without one (a
    preview) indexes its session afresh."""

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


def latest_compaction_text(index: TurnStarts, entries: Sequence[TranscriptEntry]) -> str:
    return entries[index.compaction].text if index.compaction >= 0 else ""


def pack_recent_turns(entries: Sequence[TranscriptEntry], index: TurnStarts, cap_tokens: int,
                      count: Callable[[str], int], batch_char_cap: int = NO_CAP,
                      fold: Fold | None = None, render_key: Hashable = None) -> Callable[[int], tuple[list[str], int]]:
    """A packer for this step: `pack(cap)` gives (lines, dropped turns) for any cap up to
    `cap_tokens`. `render_key` names what the lines depend on besides the rows (the fold's
    template, the cap, the counter): settled turns rendered under the same key are reused;
    None renders every turn looked at afresh."""
    if not index.ordered:
        turns = lines_by_turn(entries, batch_char_cap, fold)
        return lambda cap: pack_conversation(turns, cap, count)
    newest_row = entries[index.newest_result] if index.newest_result >= 0 and fold is not None else None
    newest: Batch | None = None if newest_row is None else (newest_row.turn_index, newest_row.step)
    cache = index.rendered.setdefault(render_key, {}) if render_key is not None else {}
    groups = len(index.turns)
    window: list[RenderedTurn] = []
    budget: int | None = None  # room for older turns once the newest turn with lines is known
    first_group = 0
    for group in range(groups - 1, -1, -1):
        turn = _turn(entries, index, group, newest, cache, count, batch_char_cap, fold)
        if turn is None:
            continue
        if budget is None:
            budget = cap_tokens - turn.cost
        elif turn.cost > budget:  # the first turn that does not fit: it and everything older are counted
            first_group = group + 1
            break
        else:
            budget -= turn.cost
        window.append(turn)
    window.reverse()
    older = index.older(first_group) if first_group else Older()
    if render_key is not None:
        for stale in [g for g in cache if g < first_group - 1]:  # keep only what later steps can reach
            del cache[stale]
    turns = [(t.turn_index, t.lines) for t in window]
    costs = [t.cost for t in window]
    return lambda cap: pack_conversation(turns, cap, count, older, costs)


def _turn(entries: Sequence[TranscriptEntry], index: TurnStarts, group: int, newest: Batch | None,
          cache: dict[int, RenderedTurn | None], count: Callable[[str], int], batch_char_cap: int,
          fold: Fold | None) -> RenderedTurn | None:
    """Group `group` rendered (None when it has no conversation line), from the cache when it
    is settled: not the newest group (rows may still join it), and rendered with the same
    newest batch wherever that batch is in it."""
    turn_index = index.turns[group]
    newest_here = newest if newest is not None and newest[0] == turn_index else None
    settled = group < len(index.turns) - 1
    if settled and group in cache:
        kept = cache[group]
        if kept is None or kept.newest == newest_here:
            return kept
    if not index.has_lines[group]:
        rendered = None
    else:
        end = index.starts[group + 1] if settled else index.scanned
        lines = [line for _, group_lines in lines_by_turn(entries[index.starts[group]:end], batch_char_cap, fold,
                                                          newest) for line in group_lines]
        rendered = RenderedTurn(turn_index, lines, turn_cost(lines, count), newest_here)
    if settled:
        cache[group] = rendered
    return rendered
