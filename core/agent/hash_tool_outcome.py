"""Stable fingerprints of tool arguments and tool outcomes, for loop detection.

Two calls are "the same" when their args serialise to the same canonical JSON; two
outcomes are "the same" when status, summary and details match once per-call noise
(timings, sizes, ids) is removed. Without stripping that noise, every HTTP result
would hash differently and a dead endpoint hit in a loop would never register.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from atomic_agent.records.tool_spec import ToolResult

VOLATILE_RESULT_KEYS: frozenset[str] = frozenset({
    "timestamp", "ts", "date", "time", "timeTotal", "timeTotalSeconds", "durationMs",
    "sizeDownload", "requestId", "request_id", "id", "traceId", "trace_id", "sentAt",
    "createdAt", "deliveredAt",
})

SHELL_TOOL_PREFIX = "os.shell."
_SHELL_OUTPUT_KEYS = ("stdout", "stderr", "output")


def _normalise(value: Any) -> Any:
    """JSON-ready copy: mappings get str keys, sequences become lists, sets get sorted,
    anything else unknown becomes its repr (hashing must never raise)."""
    if isinstance(value, Mapping):
        return {str(key): _normalise(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_normalise(item) for item in value), key=canonical_json)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def canonical_json(value: Any) -> str:
    """Key-sorted, whitespace-free JSON of `value`, so key order never changes a hash."""
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def strip_volatile(value: Any) -> Any:
    """`value` with every `VOLATILE_RESULT_KEYS` key dropped at any depth."""
    if isinstance(value, Mapping):
        return {key: strip_volatile(item) for key, item in value.items()
                if str(key) not in VOLATILE_RESULT_KEYS}
    if isinstance(value, (list, tuple)):
        return [strip_volatile(item) for item in value]
    return value


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def hash_args(args: Mapping[str, Any] | None) -> str:
    """Fingerprint of a call's arguments (None and {} are the same call)."""
    return _digest(canonical_json(args or {}))


def _shell_outcome(result: ToolResult) -> dict[str, Any]:
    # a shell run is judged by what it did (exit code + output), not by its timings
    details = result.details
    exit_code = details.get("exitCode", details.get("exit_code"))
    output = {key: details[key] for key in _SHELL_OUTPUT_KEYS if key in details}
    if not output:
        output = {"summary": result.summary}
    return {"status": result.status, "exitCode": exit_code, "output": output}


def hash_tool_outcome(tool: str, result: ToolResult) -> str:
    """Fingerprint of one tool result; equal for results that show no progress."""
    if tool.startswith(SHELL_TOOL_PREFIX):
        material: dict[str, Any] = _shell_outcome(result)
    else:
        material = {"status": result.status, "summary": result.summary,
                    "details": strip_volatile(_normalise(result.details))}
    return _digest(canonical_json(material))
