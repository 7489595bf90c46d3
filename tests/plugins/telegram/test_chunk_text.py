"""Outbound chunks: at most 4,096 UTF-16 units, cut on line breaks when one fits, never
inside a surrogate pair, nothing lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from atomic_agent.plugins.telegram.chunk_text import MAX_UNITS, chunk_text, utf16_units

EMOJI = "\U0001F600"  # two UTF-16 units


def test_a_short_text_is_one_chunk() -> None:
    assert chunk_text("hello") == ["hello"]
    assert chunk_text("") == [""]


def test_chunks_are_cut_at_the_last_line_break_that_fits() -> None:
    first = "a" * 3000
    second = "b" * 3000
    assert chunk_text(f"{first}\n{second}") == [first, second]


def test_an_emoji_straddling_the_limit_moves_whole_into_the_next_chunk() -> None:
    text = "a" * (MAX_UNITS - 1) + EMOJI + "tail"
    chunks = chunk_text(text)
    assert chunks == ["a" * (MAX_UNITS - 1), EMOJI + "tail"]
    assert all(utf16_units(c) <= MAX_UNITS for c in chunks)


def test_a_text_of_only_emoji_is_cut_between_pairs() -> None:
    chunks = chunk_text(EMOJI * 5000)
    assert [utf16_units(c) for c in chunks] == [4096, 4096, 1808]
    assert "".join(chunks) == EMOJI * 5000


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", " ", "\n", "é", EMOJI, "𝄞", "<", "*"]), max_size=3000),
       st.integers(min_value=2, max_value=300))
def test_chunks_fit_and_lose_nothing_but_the_cut_line_breaks(text: str, limit: int) -> None:
    chunks = chunk_text(text, limit)
    assert all(utf16_units(c) <= limit for c in chunks)
    assert all(not (0xD800 <= ord(ch) <= 0xDFFF) for c in chunks for ch in c)  # no half pair anywhere
    assert "".join(chunks).replace("\n", "") == text.replace("\n", "")
