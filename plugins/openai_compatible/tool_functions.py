"""ToolSpecs as OpenAI `tools`, and the returned `tool_calls` mapped back to registry names.

Function names may not contain dots, so `os.fs.read` travels as `os__fs__read`. `reply`
and `finish` are offered as functions too, so a chat model can end the turn the same way
the grammar path does. Each function's parameters are the tool's own args JSON schema.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

DOT_ESCAPE = "__"
FALLBACK_PARAMETERS: dict[str, Any] = {"type": "object", "properties": {}}
SYNTHETIC_FUNCTIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "reply": ("Answer the user and end the turn.",
              {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    "finish": ("End the whole session with a summary.",
               {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]}),
}


class MalformedToolCallError(ValueError):
    """A tool call whose arguments are not a JSON object. `raw_preview` files it under the
    grammar category, like any answer that does not parse."""

    def __init__(self, message: str, raw_preview: str) -> None:
        super().__init__(message)
        self.raw_preview = raw_preview


def escape_name(name: str) -> str:
    return name.replace(".", DOT_ESCAPE)


def unescape_name(name: str, offered: Mapping[str, str] | None = None) -> str:
    """The registry name for a returned function name (exact lookup first, then un-escaping)."""
    if offered and name in offered:
        return offered[name]
    return name.replace(DOT_ESCAPE, ".")


def _function(name: str, description: str, parameters: Mapping[str, Any] | None) -> dict[str, Any]:
    params = dict(parameters) if parameters else dict(FALLBACK_PARAMETERS)
    return {"type": "function", "function": {"name": escape_name(name), "description": description,
                                             "parameters": params}}


def tools_payload(specs: Sequence[Any]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """(OpenAI `tools` list, escaped name -> registry name) for `specs` plus reply/finish."""
    tools: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    for spec in specs:
        tools.append(_function(spec.name, spec.summary, spec.args_schema))
        names[escape_name(spec.name)] = spec.name
    for name, (description, schema) in SYNTHETIC_FUNCTIONS.items():
        if name not in names:
            tools.append(_function(name, description, schema))
            names[name] = name
    return tools, names


def parse_arguments(raw: Any, function_name: str) -> dict[str, Any]:
    """Arguments as a dict. They arrive as a JSON string; some models serialise twice."""
    value = raw
    for _ in range(2):
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return {}
            try:
                value = json.loads(text)
            except ValueError:
                raise MalformedToolCallError(f"the arguments of tool call {function_name!r} are not JSON",
                                             str(raw)[:400]) from None
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise MalformedToolCallError(f"the arguments of tool call {function_name!r} are a {type(value).__name__}, "
                                     "not a JSON object", str(raw)[:400])
    return value


def map_tool_calls(calls: Sequence[tuple[str, Any]], offered: Mapping[str, str], *, cut_by_limit: bool = False
                   ) -> tuple[tuple[str, dict[str, Any]], ...]:
    """(registry name, args) pairs; exact duplicates are dropped (small models repeat a call).

    With `cut_by_limit` (the answer hit max_tokens) a last call whose arguments were cut
    off is dropped when complete calls precede it.
    """
    out: list[tuple[str, dict[str, Any]]] = []
    seen: set[str] = set()
    for position, (name, raw_args) in enumerate(calls):
        try:
            args = parse_arguments(raw_args, name)
        except MalformedToolCallError:
            if cut_by_limit and out and position == len(calls) - 1:
                break
            raise
        key = name + "\x00" + json.dumps(args, sort_keys=True, default=str)
        if key in seen:
            continue
        seen.add(key)
        out.append((unescape_name(name, offered), args))
    return tuple(out)
