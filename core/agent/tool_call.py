"""What one inference asked for: its tool calls, its reasoning, and why parsing failed."""

from __future__ import annotations

from typing import Any

import attrs

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
