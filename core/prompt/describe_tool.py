"""Compact one-line renderings of tool descriptors for the prompt.

Full form (frequent tools, loaded rare tools): `name(arg: type, opt?: type) — summary`,
derived from the args JSON Schema so every tool reads the same way and stays short.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from atomic_agent.hook_records import ToolSpec


def describe_type(schema: Mapping[str, Any]) -> str:
    if "enum" in schema:
        return "|".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return "|".join(str(k) for k in kind)
    if kind == "array":
        items = schema.get("items")
        return f"{describe_type(items)}[]" if isinstance(items, Mapping) else "array"
    if kind == "object" and isinstance(schema.get("properties"), Mapping):
        return "{" + describe_params(schema) + "}"
    return str(kind)


def describe_params(schema: Mapping[str, Any]) -> str:
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    parts = []
    for name, sub in props.items():
        mark = "" if name in required else "?"
        parts.append(f"{name}{mark}: {describe_type(sub if isinstance(sub, Mapping) else {})}")
    return ", ".join(parts)


def describe_full(spec: ToolSpec) -> str:
    line = f"{spec.name}({describe_params(spec.args_schema)}) — {spec.summary}"
    if spec.approval_category:
        line += " [asks approval]"
    return line


def descriptor_parts(spec: ToolSpec) -> dict[str, Any]:
    """What a template needs to render a tool its own way: the signature `name(args)`, the
    summary, whether it asks approval (describe_full joins them one fixed way)."""
    return {"name": spec.name, "signature": f"{spec.name}({describe_params(spec.args_schema)})",
            "summary": spec.summary, "approval": bool(spec.approval_category)}


_CLAUSE_ENDS = (" (", "; ", ". ", ": ")


def first_clause(text: str) -> str:
    """The text up to its first parenthesis, semicolon, colon or sentence end (a Jinja filter:
    the stable prefix shows a tool's leading clause, tool.view the whole summary)."""
    cut = min((i for i in (text.find(end) for end in _CLAUSE_ENDS) if i > 0), default=len(text))
    return text[:cut].rstrip(" .")
