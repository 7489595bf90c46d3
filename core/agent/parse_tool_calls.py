"""Turn one completion's text into a ToolCallBatch (step 1 of the step pipeline).

Accepted shapes, after an optional reasoning block:

- the production array form `[{"tool": ..., "args": {...}}, ...]` with 1..16 calls;
- a legacy bare `{"tool": ..., "args": {...}}` object (tests and replayed traces), kind "single".

Anything else raises ToolCallParseError with a message that says what was wrong.
"""

from __future__ import annotations

import json
from typing import Any

from atomic_agent.agent.tool_call import ToolCall, ToolCallBatch, ToolCallParseError
from atomic_agent.grammar.tool_call_limits import HARD_MAX_TOOL_CALLS
from atomic_agent.llm.model_profile import ModelProfile

_EXPECTED_SHAPE = 'answer with a JSON array of calls such as [{"tool": "reply", "args": {"text": "..."}}]'
_CALL_KEYS = frozenset(("tool", "args"))


def parse_tool_calls(text: str, profile: ModelProfile, *, prefilled_open: bool) -> ToolCallBatch:
    """Parse `text` (the completion content) for `profile`.

    `prefilled_open` says the prompt ended with the profile's reasoning open tag, so the
    completion starts inside the reasoning block; the tag is put back before splitting.
    """
    normalized = _restore_prefill(text, profile) if prefilled_open else text
    try:
        reasoning, body = _split_reasoning(normalized, profile, text)
    except ToolCallParseError:
        # the reasoning may have gone to a separate channel (reasoning_content), leaving
        # only the array in the content even though the prompt prefilled the open tag
        if normalized is text or not text.lstrip().startswith(("[", "{")):
            raise
        reasoning, body = "", text
    value = _decode_single_json_value(body, text)
    if isinstance(value, list):
        return ToolCallBatch("batch", _checked_calls(value, text), reasoning)
    if isinstance(value, dict):
        return ToolCallBatch("single", (_checked_call(value, None, text),), reasoning)
    raise ToolCallParseError.for_text(
        f"the completion is a JSON {_json_kind(value)}, not a tool-call array; {_EXPECTED_SHAPE}", text
    )


def _restore_prefill(text: str, profile: ModelProfile) -> str:
    if not profile.prefill or profile.reasoning_open_emitted_by_model:
        return text
    # some servers echo the prefilled tag back; never double it
    if profile.has_reasoning and text.lstrip().startswith(profile.reasoning_open.rstrip()):
        return text
    return profile.prefill + text


def _split_reasoning(text: str, profile: ModelProfile, raw: str) -> tuple[str, str]:
    """(reasoning, rest). The reasoning block is a prelude: it can only come first."""
    if not profile.has_reasoning:
        return "", text
    stripped = text.lstrip()
    opener = profile.reasoning_open.rstrip()
    close = profile.reasoning_close
    if stripped.startswith(opener):
        inner = stripped[len(opener):]
        end = inner.find(close)
        if end < 0:
            raise ToolCallParseError.for_text(
                f"the reasoning block opened with {opener!r} is never closed with {close!r} (the completion "
                "probably ran out of tokens while thinking); close the block, then give the tool-call array",
                raw,
            )
        return inner[:end].strip(), inner[end + len(close):]
    # The open tag may be missing when the server swallowed it; a close sentinel before any
    # JSON still marks the end of the reasoning.
    if not stripped.startswith(("[", "{")) and close in stripped:
        end = stripped.find(close)
        return stripped[:end].strip(), stripped[end + len(close):]
    return "", text


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "null")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _decode_single_json_value(body: str, raw: str) -> Any:
    stripped = body.strip()
    if not stripped:
        raise ToolCallParseError.for_text(f"the completion holds no tool call; {_EXPECTED_SHAPE}", raw)
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    try:
        value, end = decoder.raw_decode(stripped)
    except json.JSONDecodeError as error:
        raise ToolCallParseError.for_text(
            f"the tool-call answer is not valid JSON ({error.msg} at character {error.pos}); {_EXPECTED_SHAPE}", raw
        ) from error
    except ValueError as error:
        raise ToolCallParseError.for_text(f"the tool-call answer is not valid JSON ({error}); {_EXPECTED_SHAPE}", raw)
    trailing = stripped[end:].strip()
    if trailing:
        raise ToolCallParseError.for_text(
            f"unexpected text after the tool-call JSON: {trailing[:60]!r}; end the answer with the closing ']'", raw
        )
    return value


def _checked_calls(items: list[Any], raw: str) -> tuple[ToolCall, ...]:
    if not items:
        raise ToolCallParseError.for_text(
            f"the tool-call array is empty; a step calls at least one tool; {_EXPECTED_SHAPE}", raw
        )
    if len(items) > HARD_MAX_TOOL_CALLS:
        raise ToolCallParseError.for_text(
            f"the tool-call array has {len(items)} calls, more than the {HARD_MAX_TOOL_CALLS} a step allows; "
            "split the work over several steps",
            raw,
        )
    return tuple(_checked_call(item, index, raw) for index, item in enumerate(items))


def _checked_call(item: Any, index: int | None, raw: str) -> ToolCall:
    where = "the tool call" if index is None else f"call #{index + 1}"
    if not isinstance(item, dict):
        raise ToolCallParseError.for_text(
            f"{where} is a JSON {_json_kind(item)}, not an object; {_EXPECTED_SHAPE}", raw
        )
    tool = item.get("tool")
    if not isinstance(tool, str) or not tool.strip():
        raise ToolCallParseError.for_text(f'{where} has no non-empty string "tool"; {_EXPECTED_SHAPE}', raw)
    args = item.get("args")
    if not isinstance(args, dict):
        got = "missing" if "args" not in item else f"a JSON {_json_kind(args)}"
        raise ToolCallParseError.for_text(f'{where} ({tool}): "args" must be an object, got {got}', raw)
    extra = sorted(set(item) - _CALL_KEYS)
    if extra:
        raise ToolCallParseError.for_text(
            f'{where} ({tool}) has unexpected keys {", ".join(extra)}; a call holds only "tool" and "args"', raw
        )
    return ToolCall(tool, args)
