"""Dotted keys (`agent.maxParallelToolCalls`) into a raw config mapping."""

from __future__ import annotations

import json
from typing import Any

from atomic_agent.config.config_errors import ConfigError


def get_key(raw: dict[str, Any], key: str) -> Any:
    node: Any = raw
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(None, key, "no such key", "Run `atomic-agent config show` to see the keys")
        node = node[part]
    return node


def parse_value(text: str) -> Any:
    """VALUE as JSON when it parses (8, true, ["a"]), else the plain string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def set_key(raw: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    parts = key.split(".")
    if len(parts) < 2:
        raise ConfigError(None, key, "a key names a block and a field", "Use BLOCK.FIELD, e.g. agent.approvalLevel")
    node = raw
    for part in parts[:-1]:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(None, key, f"{part!r} is not an object", "Choose a key inside a block")
        node = child
    node[parts[-1]] = value
    return raw
