"""Forward migrations of config.json, one plain dict -> dict step per version.

Steps never rename or reorder once shipped. A step only fills or rewrites what it owns;
user values are kept verbatim. Plugin blocks migrate through their ConfigBlock.migrate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CONFIG_VERSION = 2

Raw = dict[str, Any]


def m001_to_v2(raw: Raw) -> Raw:
    """v1 had a binary `agent.approvalRequired` and `localModels.url`; v2 has the ladder.

    approvalRequired false -> level 5 (full trust); true or absent -> level 1 (paranoid).
    `localModels.url` moves to `llama.url` unless that is already set.
    """
    agent = dict(raw.get("agent") or {})
    if "approvalRequired" in agent:
        required = agent.pop("approvalRequired")
        agent.setdefault("approvalLevel", 1 if required is not False else 5)
    raw["agent"] = agent
    local = raw.get("localModels")
    if isinstance(local, dict) and "url" in local:
        llama = dict(raw.get("llama") or {})
        llama.setdefault("url", local["url"])
        raw["llama"] = llama
        rest = {k: v for k, v in local.items() if k != "url"}
        if rest:
            raw["localModels"] = rest
        else:
            raw.pop("localModels")
    return raw


#: MIGRATIONS[n] upgrades a file at version n to version n + 1
MIGRATIONS: dict[int, Callable[[Raw], Raw]] = {1: m001_to_v2}


def migrate_raw(raw: Raw) -> tuple[Raw, int, int]:
    """Upgrade `raw` to CONFIG_VERSION. Returns (raw, from_version, to_version)."""
    start = int(raw.get("version", 1))
    version = start
    while version < CONFIG_VERSION:
        raw = MIGRATIONS[version](dict(raw))
        version += 1
    if start < CONFIG_VERSION:
        raw["version"] = CONFIG_VERSION
    return raw, start, max(version, start)
