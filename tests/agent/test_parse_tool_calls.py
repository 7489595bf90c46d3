"""Parsing one completion into a ToolCallBatch, and the errors for everything else."""

from __future__ import annotations

import pickle

import pytest

from atomic_agent.agent.tool_calls import ToolCall, ToolCallBatch, ToolCallParseError, parse_tool_calls
from atomic_agent.llm.model_profile import GEMMA4_THINK_PROFILE, PLAIN_CHATML_PROFILE, QWEN_THINK_PROFILE

PLAIN = PLAIN_CHATML_PROFILE


def _parse_plain(text: str) -> ToolCallBatch:
    return parse_tool_calls(text, PLAIN, prefilled_open=False)


def test_array_form_is_a_batch_in_order() -> None:
    batch = _parse_plain('[{"tool":"os.fs.read","args":{"path":"a"}},{"tool":"reply","args":{"text":"x"}}]')
    assert batch == ToolCallBatch(
        "batch", (ToolCall("os.fs.read", {"path": "a"}), ToolCall("reply", {"text": "x"})), "")


def test_solo_step_is_a_length_one_batch() -> None:
    batch = _parse_plain('[{"tool":"reply","args":{}}]')
    assert batch.kind == "batch" and batch.calls == (ToolCall("reply", {}),)


def test_legacy_bare_object_accepted() -> None:
    batch = _parse_plain('{"tool": "reply", "args": {"text": "hi"}}')
    assert batch.kind == "single" and batch.calls == (ToolCall("reply", {"text": "hi"}),)


def test_surrounding_whitespace_is_tolerated() -> None:
    assert len(_parse_plain('\n\n  [ {"tool":"reply","args":{}} ]\n\t').calls) == 1


def test_qwen_reasoning_is_collected_after_restoring_the_prefilled_open_tag() -> None:
    text = "I should reply.\n</think>\n\n[{\"tool\":\"reply\",\"args\":{\"text\":\"hi\"}}]"
    batch = parse_tool_calls(text, QWEN_THINK_PROFILE, prefilled_open=True)
    assert batch.reasoning == "I should reply."
    assert batch.calls == (ToolCall("reply", {"text": "hi"}),)


def test_echoed_open_tag_is_not_doubled() -> None:
    text = "<think>\nplan\n</think>[{\"tool\":\"reply\",\"args\":{}}]"
    assert parse_tool_calls(text, QWEN_THINK_PROFILE, prefilled_open=True).reasoning == "plan"


def test_gemma_reasoning_block_written_by_the_model_is_collected() -> None:
    text = "<|channel>thought\nread first<channel|>\n[{\"tool\":\"os.fs.read\",\"args\":{\"path\":\"x\"}}]"
    batch = parse_tool_calls(text, GEMMA4_THINK_PROFILE, prefilled_open=False)
    assert batch.reasoning == "read first" and batch.calls[0].tool == "os.fs.read"


def test_reasoning_profile_without_a_block_still_parses() -> None:
    batch = parse_tool_calls('[{"tool":"reply","args":{}}]', GEMMA4_THINK_PROFILE, prefilled_open=False)
    assert batch.reasoning == "" and batch.kind == "batch"


def test_close_sentinel_inside_args_is_not_reasoning() -> None:
    text = '[{"tool":"os.fs.write","args":{"content":"<think>a</think>"}}]'
    batch = parse_tool_calls(text, QWEN_THINK_PROFILE, prefilled_open=False)
    assert batch.reasoning == "" and batch.calls[0].args == {"content": "<think>a</think>"}


def test_unclosed_reasoning_block_is_a_parse_error() -> None:
    with pytest.raises(ToolCallParseError, match="never closed"):
        parse_tool_calls("thinking forever", QWEN_THINK_PROFILE, prefilled_open=True)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "no tool call"),
        ("Sure! I will read the file.", "not valid JSON"),
        ('[{"tool":"reply","args":{}}', "not valid JSON"),
        ("[]", "empty"),
        ('"reply"', "JSON string, not a tool-call array"),
        ("[1]", "call #1 is a JSON number"),
        ('[{"args":{}}]', 'no non-empty string "tool"'),
        ('[{"tool":7,"args":{}}]', 'no non-empty string "tool"'),
        ('[{"tool":"reply","args":[]}]', '"args" must be an object, got a JSON array'),
        ('[{"tool":"reply"}]', '"args" must be an object, got missing'),
        ('{"tool":"reply","args":"x"}', '"args" must be an object, got a JSON string'),
        ('[{"tool":"reply","args":{},"id":1}]', "unexpected keys id"),
        ('[{"tool":"reply","args":{}}] trailing', "unexpected text after"),
        ('[{"tool":"reply","args":{"n":NaN}}]', "not valid JSON"),
    ],
)
def test_anything_else_raises_a_parse_error_naming_the_problem(text: str, problem: str) -> None:
    with pytest.raises(ToolCallParseError) as caught:
        _parse_plain(text)
    assert problem in str(caught.value)
    assert caught.value.raw_preview == text[:400]


def test_more_than_sixteen_calls_is_a_parse_error() -> None:
    text = "[" + ",".join(['{"tool":"os.fs.read","args":{}}'] * 17) + "]"
    with pytest.raises(ToolCallParseError, match="17 calls, more than the 16"):
        _parse_plain(text)
    assert len(_parse_plain("[" + ",".join(['{"tool":"os.fs.read","args":{}}'] * 16) + "]").calls) == 16


def test_raw_preview_is_the_first_400_characters() -> None:
    text = "x" * 1000
    with pytest.raises(ToolCallParseError) as caught:
        _parse_plain(text)
    assert caught.value.raw_preview == "x" * 400


def test_parse_error_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(ToolCallParseError("bad", "raw")))
    assert (error.message, error.raw_preview, str(error)) == ("bad", "raw", "bad")


def test_prefilled_open_with_reasoning_delivered_elsewhere_parses_the_bare_array() -> None:
    # channel A: the server split the reasoning into reasoning_content; content is just the array
    batch = parse_tool_calls('[{"tool":"reply","args":{}}]', QWEN_THINK_PROFILE, prefilled_open=True)
    assert batch.reasoning == "" and batch.calls == (ToolCall("reply", {}),)
