"""Make a tool result safe for the prompt and the trace, whatever the tool returned.

The summary is the only part the model sees: capped, control characters removed,
undecodable bytes replaced. Details go to the trace, with long strings clipped so one
50 MB output cannot bloat the trace either.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from atomic_agent.records.tool_spec import ToolResult

DETAIL_STRING_CAP = 8000
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def clean_text(value: object) -> str:
    if isinstance(value, bytes):
        text = value.decode("utf-8", errors="replace")
    else:
        text = str(value)
    text = text.encode("utf-8", errors="replace").decode("utf-8", errors="replace")  # lone surrogates
    return _CONTROL.sub("", text)


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[:cap] + f"…[truncated {len(text) - cap} chars]"


def _clip_details(value: Any, depth: int = 0) -> Any:
    if depth > 6:
        return "…"
    if isinstance(value, (str, bytes)):
        return _clip(clean_text(value), DETAIL_STRING_CAP)
    if isinstance(value, Mapping):
        return {str(k): _clip_details(v, depth + 1) for k, v in list(value.items())[:200]}
    if isinstance(value, (list, tuple)):
        return [_clip_details(v, depth + 1) for v in list(value)[:200]]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return _clip(clean_text(value), DETAIL_STRING_CAP)


def compress_result(result: object, summary_cap: int) -> ToolResult:
    """A well-formed ToolResult from whatever a tool returned (even a non-ToolResult)."""
    if not isinstance(result, ToolResult):
        return ToolResult.error(f"tool returned {type(result).__name__}, not a ToolResult")
    status = result.status if result.status in ("ok", "error", "cancelled") else "error"
    details = _clip_details(dict(result.details)) if result.details else {}
    return ToolResult(status, _clip(clean_text(result.summary), summary_cap), details)
