"""Memory sections truncate the same way: whole lines, and a `[truncated]` marker that
always fits when lines are cut."""

from __future__ import annotations

from atomic_agent.prompt.capped_lines import TRUNCATED, capped_lines


def count(text: str) -> int:
    return len(text.split())


def test_everything_fits_without_a_marker() -> None:
    assert capped_lines(["a b", "c"], 10, count) == "a b\nc"


def test_cut_keeps_room_for_the_marker_and_only_whole_lines() -> None:
    out = capped_lines(["one two", "three four", "five six"], 6, count)
    assert out.splitlines() == ["one two", TRUNCATED]


def test_the_last_line_needs_no_marker_room() -> None:
    assert capped_lines(["a", "b"], 4, count) == "a\nb"
