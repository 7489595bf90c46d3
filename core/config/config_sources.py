"""Every effective config value by dotted key, with where it came from: the user's
config.json, an `ATOMIC_AGENT_*` variable, or the default of this build (`config show`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from atomic_agent.config.app_config import AppConfig
from atomic_agent.config.config_fields import to_camel

USER, DEFAULT, ENV = "user", "default", "env"


@attrs.frozen
class ConfigValue:
    """One leaf of the effective config."""

    key: str
    value: Any
    source: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value, "source": self.source}


def _in_file(user: Mapping[str, Any], key: str) -> bool:
    node: Any = user
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def _leaves(prefix: str, record: Any) -> list[tuple[str, Any]]:
    """Dotted keys of a block; a nested record is walked, any other value (lists, maps) is one leaf."""
    from atomic_agent.config.config_converter import strict_converter

    out: list[tuple[str, Any]] = []
    for field in attrs.fields(type(record)):
        value = getattr(record, field.name)
        key = f"{prefix}.{to_camel(field.name)}"
        if attrs.has(type(value)):
            out.extend(_leaves(key, value))
        else:
            out.append((key, strict_converter.unstructure(value)))  # tuples as lists, as on disk
    return out


def _raw_leaves(prefix: str, value: Any) -> list[tuple[str, Any]]:
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in _raw_leaves(f"{prefix}.{k}", v)]
    return [(prefix, value)]


def config_values(config: AppConfig) -> list[ConfigValue]:
    """Known blocks in key order, then blocks no loaded plugin owns (as the file holds them)."""
    values: list[ConfigValue] = []
    for block_key in sorted(config.blocks):
        for key, value in _leaves(block_key, config.blocks[block_key]):
            source = ENV if key in config.env_keys else USER if _in_file(config.user_values, key) else DEFAULT
            values.append(ConfigValue(key, value, source))
    for block_key in sorted(config.unknown_blocks):
        values.extend(ConfigValue(k, v, USER) for k, v in _raw_leaves(block_key, config.unknown_blocks[block_key]))
    return values
