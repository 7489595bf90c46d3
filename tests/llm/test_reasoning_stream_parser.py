"""Live splitting of streamed completions into reasoning and content pieces."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from atomic_agent.llm.model_profile import GEMMA4_THINK_PROFILE, PLAIN_CHATML_PROFILE, QWEN_THINK_PROFILE
from atomic_agent.llm.reasoning_stream_parser import ReasoningStreamParser

ARRAY = '[{"tool":"reply","args":{"text":"hi"}}]'


def _run(parser: ReasoningStreamParser, chunks: Iterable[str]) -> list[tuple[str, str]]:
    pieces: list[tuple[str, str]] = []
    for chunk in chunks:
        pieces += parser.feed(chunk)
    return pieces + parser.finish()


def _merged(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    merged: list[tuple[str, str]] = []
    for kind, text in pieces:
        if merged and merged[-1][0] == kind:
            merged[-1] = (kind, merged[-1][1] + text)
        else:
            merged.append((kind, text))
    return merged


def test_plain_profile_streams_everything_as_content() -> None:
    parser = ReasoningStreamParser(PLAIN_CHATML_PROFILE, pre_opened=False)
    assert _run(parser, ["<think>", "x</think>", ARRAY]) == [("content", "<think>"), ("content", "x</think>"),
                                                               ("content", ARRAY)]


def test_pre_opened_qwen_stream_starts_in_reasoning() -> None:
    parser = ReasoningStreamParser(QWEN_THINK_PROFILE, pre_opened=True)
    assert parser.feed("plan: read") == [("reasoning", "plan: read")]
    assert parser.feed(" it</think>\n" + ARRAY) == [("reasoning", " it"), ("content", "\n" + ARRAY)]
    assert parser.reasoning_closed and parser.reasoning == "plan: read it"


def test_stream_parser_splits_sentinel_across_chunks() -> None:
    text = "think hard</think>" + ARRAY
    for cut in range(len("think hard"), len("think hard</think>") + 1):
        parser = ReasoningStreamParser(QWEN_THINK_PROFILE, pre_opened=True)
        pieces = _run(parser, [text[:cut], text[cut:]])
        assert _merged(pieces) == [("reasoning", "think hard"), ("content", ARRAY)], cut


def test_sentinel_split_into_single_characters_is_still_found() -> None:
    text = "<|channel>thought\nweigh options<channel|>\n" + ARRAY
    parser = ReasoningStreamParser(GEMMA4_THINK_PROFILE, pre_opened=False)
    assert _merged(_run(parser, list(text))) == [("reasoning", "\nweigh options"), ("content", "\n" + ARRAY)]


def test_held_back_partial_sentinel_is_not_emitted_early() -> None:
    parser = ReasoningStreamParser(QWEN_THINK_PROFILE, pre_opened=True)
    assert parser.feed("a </thi") == [("reasoning", "a ")]
    assert parser.feed("s is not the tag") == [("reasoning", "</this is not the tag")]


def test_gemma_detects_the_channel_open_live() -> None:
    parser = ReasoningStreamParser(GEMMA4_THINK_PROFILE, pre_opened=False)
    assert parser.feed("<|chan") == []
    assert parser.feed("nel>thought\nstep 1") == [("reasoning", "\nstep 1")]
    assert parser.feed("<channel|>" + ARRAY) == [("content", ARRAY)]
    assert parser.content == ARRAY


def test_missing_open_sentinel_means_plain_content() -> None:
    parser = ReasoningStreamParser(GEMMA4_THINK_PROFILE, pre_opened=False)
    assert _run(parser, [ARRAY[:3], ARRAY[3:]]) == [("content", ARRAY[:3]), ("content", ARRAY[3:])]
    assert parser.reasoning == ""


def test_sentinels_after_content_started_are_content() -> None:
    parser = ReasoningStreamParser(QWEN_THINK_PROFILE, pre_opened=True)
    pieces = _run(parser, ["r</think>[", '{"tool":"x","args":{"t":"</think>"}}]'])
    assert _merged(pieces) == [("reasoning", "r"), ("content", '[{"tool":"x","args":{"t":"</think>"}}]')]


def test_finish_flushes_an_unterminated_reasoning_block() -> None:
    parser = ReasoningStreamParser(QWEN_THINK_PROFILE, pre_opened=True)
    assert parser.feed("still thinking </th") == [("reasoning", "still thinking ")]
    assert parser.finish() == [("reasoning", "</th")]
    assert not parser.reasoning_closed


def test_finish_flushes_a_partial_open_sentinel_as_content() -> None:
    parser = ReasoningStreamParser(GEMMA4_THINK_PROFILE, pre_opened=False)
    assert parser.feed("<|chan") == []
    assert parser.finish() == [("content", "<|chan")]


def test_feed_after_finish_is_an_error() -> None:
    parser = ReasoningStreamParser(QWEN_THINK_PROFILE, pre_opened=True)
    parser.finish()
    with pytest.raises(RuntimeError, match="after finish"):
        parser.feed("x")
