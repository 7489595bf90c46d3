"""Text a model produced, made storable: lone surrogates become U+FFFD at the provider boundary.

A model (or a provider's JSON, which may spell `"\\ud800"`) can hand back a Python `str`
that holds an unpaired surrogate. UTF-8 cannot encode it, so the transcript write, the
HTTP response or the task report that carries it would fail — and the failure would be
blamed on whatever tool happened to be running. This is bad model output, not a tool
failure: it is repaired here, once, before anything else sees the text. A surrogate *pair*
split over two code points (a UTF-16 leftover) is joined into its character; only a
surrogate with no partner is replaced. User text is never repaired this way: ingress
refuses it instead (turns.admissible_text), because changing what a user said is worse
than asking them to resend it.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

from atomic_agent.llm.provider_protocol import Completion

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")


def repair_text(text: str) -> str:
    """`text` with every lone surrogate replaced by U+FFFD (unchanged when there is none)."""
    if not _SURROGATE.search(text):
        return text
    # UTF-16 round trip: a high+low pair becomes its character, a lone one the replacement
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def repair_value(value: Any) -> Any:
    """`value` (JSON-shaped: str, list, tuple, dict; anything else as is) with its strings
    and mapping keys repaired."""
    if isinstance(value, str):
        return repair_text(value)
    if isinstance(value, dict):
        return {repair_value(key): repair_value(item) for key, item in value.items()}
    if isinstance(value, list):
        return [repair_value(item) for item in value]
    if isinstance(value, tuple):
        return tuple(repair_value(item) for item in value)
    return value


def has_lone_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(has_lone_surrogate(key) or has_lone_surrogate(item) for key, item in value.items())
    if isinstance(value, (list, tuple)):
        return any(has_lone_surrogate(item) for item in value)
    return False


def repair_completion(completion: Completion) -> Completion:
    """The completion with its content, reasoning and native tool calls repaired (the same
    object when nothing needed it, so the common case costs one regex scan)."""
    if not (has_lone_surrogate(completion.content) or has_lone_surrogate(completion.reasoning_content)
            or has_lone_surrogate(completion.tool_calls)):
        return completion
    return attrs.evolve(completion, content=repair_text(completion.content),
                        reasoning_content=repair_text(completion.reasoning_content),
                        tool_calls=repair_value(completion.tool_calls))
