"""The conversation window: the section a long session gets is exactly what rendering every
turn gives, while only a window of recent turns is rendered (a step at turn 10,000 costs
what it does at turn 10)."""

from __future__ import annotations

import random

import pytest

from atomic_agent.prompt import conversation_window
from atomic_agent.prompt.build_prompt import estimate_tokens
from atomic_agent.prompt.conversation_lines import lines_by_turn
from atomic_agent.prompt.conversation_window import ConversationIndex, pack_recent_turns
from atomic_agent.prompt.pack_conversation import pack_conversation
from atomic_agent.sessions.transcript_entry import (
    COMPACTION,
    FAILURE_NOTE,
    REPLY,
    TOOL_CALL,
    TOOL_RESULT,
    TURN_FINISHED,
    TURN_STARTED,
    USER,
    TranscriptEntry,
)


def fold(entry: TranscriptEntry) -> str:
    return f"older {entry.tool} {entry.status}: {entry.text[:10]}"


def random_turn(rng: random.Random, index: int) -> list[TranscriptEntry]:
    rows = [TranscriptEntry(TURN_STARTED, index)]
    shape = rng.random()
    if shape < 0.1:  # a turn with no conversation line at all (a continuation stopped at once)
        return [*rows, TranscriptEntry(TURN_FINISHED, index, status="cancelled")]
    if shape > 0.15:
        rows.append(TranscriptEntry(USER, index, text="u" * rng.randint(1, 400)))
    for step in range(rng.randint(0, 2)):
        calls = rng.randint(1, 3)
        rows += [TranscriptEntry(TOOL_CALL, index, tool="t", args={"n": b}, step=step, batch_index=b)
                 for b in range(calls)]
        rows += [TranscriptEntry(TOOL_RESULT, index, text="r" * rng.randint(1, 900), tool="t", status="ok",
                                 step=step, batch_index=b) for b in range(calls)]
    if rng.random() < 0.1:
        rows.append(TranscriptEntry(FAILURE_NOTE, index, text="The last turn failed"))
    rows.append(TranscriptEntry(REPLY, index, text="a" * rng.randint(1, 300)))
    return [*rows, TranscriptEntry(TURN_FINISHED, index, status="done")]


def whole(entries: list[TranscriptEntry], cap: int) -> tuple[list[str], int]:
    return pack_conversation(lines_by_turn(entries, 2000, fold), cap, estimate_tokens)


@pytest.mark.parametrize("seed", range(12))
def test_window_packs_exactly_what_rendering_every_turn_packs(seed: int):
    rng = random.Random(seed)
    entries: list[TranscriptEntry] = []
    if seed % 3 == 0:  # a compacted session starts with the compaction row
        entries.append(TranscriptEntry(COMPACTION, 4, text="summary"))
    index = ConversationIndex()
    first = 5 if seed % 3 == 0 else 0
    for turn in range(first, first + rng.randint(1, 120)):
        entries += random_turn(rng, turn)
        if rng.random() < 0.3:  # steps read the transcript as it grows: the index is extended, not rebuilt
            for cap in (16, 300, 1500, 6000):
                for key in (None, cap):  # afresh, and reusing the turns settled in earlier steps
                    pack = pack_recent_turns(entries, index.for_entries("s", entries), cap, estimate_tokens, 2000,
                                             fold, render_key=key)
                    assert pack(cap) == whole(entries, cap)
                    assert pack(cap // 2) == whole(entries, cap // 2)


def test_a_rewritten_transcript_is_reindexed():
    rng = random.Random(7)
    entries = [row for turn in range(60) for row in random_turn(rng, turn)]
    index = ConversationIndex()
    pack_recent_turns(entries, index.for_entries("s", entries), 800, estimate_tokens, 2000, fold)
    compacted = [TranscriptEntry(COMPACTION, 49, text="what turns 0-49 said"),
                 *(row for row in entries if row.turn_index >= 50)]
    starts = index.for_entries("s", compacted)
    assert starts.turns[0] == 49 and compacted[starts.compaction].kind == COMPACTION
    for cap in (100, 800, 5000):
        assert pack_recent_turns(compacted, starts, cap, estimate_tokens, 2000, fold)(cap) == whole(compacted, cap)


def test_out_of_order_turns_are_rendered_whole():
    entries = [TranscriptEntry(USER, 3, text="late"), TranscriptEntry(USER, 1, text="early"),
               TranscriptEntry(REPLY, 1, text="a")]
    starts = ConversationIndex().for_entries("s", entries)
    assert not starts.ordered
    assert pack_recent_turns(entries, starts, 5, estimate_tokens)(5) == pack_conversation(
        lines_by_turn(entries), 5, estimate_tokens)


def test_a_long_session_renders_only_the_newest_turn_once_the_others_are_settled(monkeypatch: pytest.MonkeyPatch):
    def turn(index: int) -> list[TranscriptEntry]:
        return [TranscriptEntry(TURN_STARTED, index), TranscriptEntry(USER, index, text=f"message {index}"),
                TranscriptEntry(REPLY, index, text=f"answer {index}"), TranscriptEntry(TURN_FINISHED, index, status="done")]

    entries = [row for index in range(10_000) for row in turn(index)]
    index = ConversationIndex()
    rendered: list[int] = []
    real = conversation_window.lines_by_turn
    monkeypatch.setattr(conversation_window, "lines_by_turn",
                        lambda rows, *a, **k: rendered.append(len(rows)) or real(rows, *a, **k))
    lines, dropped = pack_recent_turns(entries, index.for_entries("s", entries), 400, estimate_tokens,
                                       render_key="k")(400)
    assert sum(rendered) < 4 * 64  # the turns that fit and the first that does not, not 10,000
    assert (lines, dropped) == pack_conversation(lines_by_turn(entries), 400, estimate_tokens)
    assert lines[0] == f"[{dropped} older turns dropped (turns 0-{dropped - 1})]"
    rendered.clear()
    entries += turn(10_000)
    starts = index.for_entries("s", entries)
    assert starts.scanned == len(entries)  # extended by the new rows, not rebuilt
    lines, dropped = pack_recent_turns(entries, starts, 400, estimate_tokens, render_key="k")(400)
    assert rendered == [4, 4]  # the new turn, and the one before as it settles; all older ones were kept
    assert (lines, dropped) == pack_conversation(lines_by_turn(entries), 400, estimate_tokens)
