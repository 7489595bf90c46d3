"""The tool calls of one step: what an inference asked for, parsed and checked.

`parse_tool_calls` turns one completion's text into a ToolCallBatch. Accepted shapes, after
an optional reasoning block:

- the production array form `[{"tool": ..., "args": {...}}, ...]` with 1..16 calls;
- a legacy bare `{"tool": ..., "args": {...}}` object (tests and replayed traces), kind "single".

Anything else raises ToolCallParseError with a message that says what was wrong.
`validate_batch` then checks the batch against the registry and the batch rules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from atomic_agent.hook_records import ResourceClass
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.prompt.build_grammar import HARD_MAX_TOOL_CALLS
from atomic_agent.tools.tool_registry import ToolRegistry, args_errors

RAW_PREVIEW_CHARS = 400


@attrs.frozen
class ToolCall:
    """One `{"tool": name, "args": {...}}` element of a step's answer."""

    tool: str
    args: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class ToolCallBatch:
    """The parsed answer of one step.

    `kind` is "batch" for the array form (always, under the production grammar; a solo
    step is a length-1 batch) and "single" for a legacy bare object from tests or replay.
    `reasoning` is the text of the model's reasoning block, "" when there was none.
    """

    kind: str
    calls: tuple[ToolCall, ...]
    reasoning: str = ""

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("single", "batch"):
            raise ValueError(f"ToolCallBatch.kind must be 'single' or 'batch', got {self.kind!r}")
        if not self.calls:
            raise ValueError("a ToolCallBatch holds at least one call")
        if self.kind == "single" and len(self.calls) != 1:
            raise ValueError(f"a 'single' ToolCallBatch holds exactly one call, got {len(self.calls)}")


class ToolCallParseError(ValueError):
    """A completion is not a valid tool-call answer. `raw_preview` is its first ~400 chars."""

    def __init__(self, message: str, raw_preview: str) -> None:
        # both in args so the error survives pickling (e.g. across a process pool)
        super().__init__(message, raw_preview)
        self.message = message
        self.raw_preview = raw_preview

    def __str__(self) -> str:
        return self.message

    @classmethod
    def for_text(cls, message: str, text: str) -> ToolCallParseError:
        return cls(message, text[:RAW_PREVIEW_CHARS])


# Reject batches the executor must not run: misplaced terminals, gated tools, unknowns, too
# many, and a terminal call whose args break its schema.
#
# A rejected batch is treated like a parse failure (one re-ask, then a grammar error).
# A length-1 batch skips the batch-shape checks (any tool may run solo), but never the
# terminal's own args: a `reply` without text (`{"tool": "reply", "args": {}}`) or with only
# whitespace would end the turn with an empty answer reported as success.

class BatchValidationError(ValueError):
    """Why a batch was rejected, one reason per offending call."""

    def __init__(self, reasons: Sequence[str], raw_preview: str = "") -> None:
        super().__init__("; ".join(reasons))
        self.reasons = list(reasons)
        self.raw_preview = raw_preview


def batch_problems(calls: Sequence[ToolCall], registry: ToolRegistry, max_calls: int) -> list[str]:
    if len(calls) <= 1:
        return []
    problems: list[str] = []
    if len(calls) > max_calls:
        problems.append(f"{len(calls)} calls exceed agent.maxParallelToolCalls={max_calls}")
    last = len(calls) - 1
    for index, call in enumerate(calls):
        cls = registry.resource_class(call.tool)
        if cls is ResourceClass.TERMINAL and index != last:
            problems.append(f"call {index}: terminal {call.tool!r} may only be the last call")
        elif registry.runs_alone(call.tool):
            problems.append(f"call {index}: {call.tool!r} asks for approval and must be the only call")
        elif cls is ResourceClass.UNKNOWN:
            problems.append(f"call {index}: {call.tool!r} is not a registered tool")
    return problems


def terminal_problems(calls: Sequence[ToolCall], registry: ToolRegistry) -> list[str]:
    """Problems with the args of the batch's terminal call (reply/finish), at any batch size."""
    if not calls or registry.resource_class(calls[-1].tool) is not ResourceClass.TERMINAL:
        return []
    call, index = calls[-1], len(calls) - 1
    spec = registry.get(call.tool)
    problems = [f"call {index}: {call.tool!r} {problem}" for problem in args_errors(spec.args_schema, call.args)] \
        if spec is not None else []
    text_key = "text" if call.tool == "reply" else "summary" if call.tool == "finish" else None
    value = call.args.get(text_key) if text_key else None
    if not problems and text_key and isinstance(value, str) and not value.strip():
        problems.append(f"call {index}: {call.tool!r} {text_key} is empty; say something to the user")
    return problems


def validate_batch(calls: Sequence[ToolCall], registry: ToolRegistry, max_calls: int) -> None:
    problems = batch_problems(calls, registry, max_calls) + terminal_problems(calls, registry)
    if problems:
        raise BatchValidationError(problems)


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
    kinds: dict[type, str] = {str: "string", list: "array", dict: "object"}
    return kinds.get(type(value), "null")


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
        raise ToolCallParseError.for_text(f"the tool-call answer is not valid JSON ({error}); {_EXPECTED_SHAPE}",
                                          raw) from error
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
