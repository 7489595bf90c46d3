"""Dropping the defaults an older config.json holds only because it was written whole.

Until v3 every write of config.json dumped every block with every default filled in, so a
default changed by a later release never reached anyone who had ever set anything. From v3
the file keeps only what the user set (as git and llm do). This is the one-time step that
turns an older file into that form: a value equal to its block's current default, or to a
default the block had in an earlier release (`ConfigBlock.former_defaults`), was written by
the release, not chosen, so it is dropped. Everything else is kept verbatim: keys this build
does not know, blocks of plugins that are not loaded, list entries.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from atomic_agent.config.config_fields import to_camel
from atomic_agent.hook_records import ConfigBlock


@attrs.frozen
class DroppedDefaults:
    """What one migration dropped: how many values, and which of them were former defaults
    (their effective value changes to today's default) as (dotted key, written value)."""

    count: int = 0
    former: tuple[tuple[str, Any], ...] = ()


def _same(a: Any, b: Any) -> bool:
    # JSON text, not ==: 1 == True and 1 == 1.0 in Python, but a written `true` is no default 1
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _unstructure(value: Any) -> Any:
    from atomic_agent.config.config_converter import strict_converter

    return strict_converter.unstructure(value)


class _Walk:
    """One block's pruning: counts what it drops and remembers former-default hits."""

    def __init__(self, block_key: str, former: Mapping[str, tuple[Any, ...]]) -> None:
        self.block_key = block_key
        self.former = former
        self.count = 0
        self.former_hits: list[tuple[str, Any]] = []

    def prune(self, raw: dict[str, Any], defaults: Any, prefix: str) -> dict[str, Any]:
        by_camel = {to_camel(f.name): f for f in attrs.fields(type(defaults))}
        kept: dict[str, Any] = {}
        for name, value in raw.items():
            field = by_camel.get(name)
            if field is None:
                kept[name] = value  # not this build's key: structuring reports it, never dropped silently
                continue
            default = getattr(defaults, field.name)
            dotted = prefix + name
            if attrs.has(type(default)) and isinstance(value, dict):
                # a nested record fills missing keys from its defaults, so it prunes key by key;
                # a dict or list field is one value (a partial one would lose the rest)
                inner = self.prune(value, default, dotted + ".")
                if inner:
                    kept[name] = inner
                continue
            if _same(value, _unstructure(default)):
                self.count += 1
                continue
            if any(_same(value, old) for old in self.former.get(dotted, ())):
                self.count += 1
                self.former_hits.append((f"{self.block_key}.{dotted}", value))
                continue
            kept[name] = value
        return kept


def drop_written_defaults(raw: Mapping[str, Any], blocks: Mapping[str, ConfigBlock]) -> tuple[dict[str, Any],
                                                                                                DroppedDefaults]:
    """`raw` (a migrated config, every plain step applied) without the values it holds only as
    defaults, and what was dropped. A block left empty is removed; `version` is kept."""
    out = dict(raw)
    count = 0
    former: list[tuple[str, Any]] = []
    for key, block in blocks.items():
        block_raw = raw.get(key)
        if not isinstance(block_raw, dict):
            continue  # absent, or not an object (structuring reports that)
        try:
            defaults = block.cls()
        except TypeError:
            continue  # a block class without defaults for every field: keep its values as written
        if block.migrate is not None:
            block_raw = block.migrate(dict(block_raw))
        walk = _Walk(key, block.former_defaults)
        kept = walk.prune(block_raw, defaults, "")
        count += walk.count
        former.extend(walk.former_hits)
        if kept:
            out[key] = kept
        else:
            out.pop(key)
    return out, DroppedDefaults(count=count, former=tuple(former))
