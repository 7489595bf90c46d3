"""Forward migrations of config.json, one plain dict -> dict step per version.

Steps never rename or reorder once shipped. A step only fills or rewrites what it owns;
user values are kept verbatim. Plugin blocks migrate through their ConfigBlock.migrate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

CONFIG_VERSION = 3
#: the first version whose file keeps only what the user set; v2 files hold every default
SPARSE_VERSION = 3

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


def m002_to_v3(raw: Raw) -> Raw:
    """v2 files hold every default of the release that wrote them; v3 files only what the
    user set. Telling the two apart needs every block's defaults, which a plain dict step does
    not have, so the dropping itself is `written_defaults.drop_written_defaults`, run by the
    loader right after these steps for a v2 file (v1 was never written whole by this project)."""
    return raw


#: MIGRATIONS[n] upgrades a file at version n to version n + 1
MIGRATIONS: dict[int, Callable[[Raw], Raw]] = {1: m001_to_v2, 2: m002_to_v3}


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
