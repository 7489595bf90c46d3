"""Qualified names of MCP tools: `mcp.<server>.<tool>`, and which raw names are acceptable."""

from __future__ import annotations

import re

PREFIX = "mcp"
#: raw tool names that may reach the prompt and the grammar: letters, digits, `_`, `-`, `.`
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


def qualify(server: str, tool: str) -> str:
    return f"{PREFIX}.{server}.{tool}"


def split_qualified(name: str) -> tuple[str, str] | None:
    """(server, tool) of a qualified MCP tool name, or None when it is not one."""
    parts = name.split(".", 2)
    if len(parts) != 3 or parts[0] != PREFIX or not parts[1] or not parts[2]:
        return None
    return parts[1], parts[2]


def tool_name_problem(raw: object) -> str | None:
    if not isinstance(raw, str) or not TOOL_NAME_RE.match(raw):
        return f"invalid tool name {str(raw)[:80]!r} (letters, digits, _ - . only, at most 64 characters)"
    return None
