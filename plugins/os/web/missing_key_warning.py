"""Say once that a configured search provider lacks its key.

Nothing hard-fails (the fallback chain works as designed), but the answers are weaker
than configured; a line per search would drown a long autonomous run, and a line per
command would drown every `atomic-agent run` on a default install. So it is said at the
first search, and each message is remembered in the state dir and said again only when it
changes (a new key missing).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from .json_state_file import load_state, save_state

WARNED_FILE = "web-search-warned.json"


def missing_key_messages(search: Any, environ: Mapping[str, str]) -> list[str]:
    names = []
    for name in (search.provider, *search.fallback):
        if name not in names:
            names.append(name)
    messages = []
    for name in names:
        if name == "exa" and search.exa_api_key_env and not environ.get(search.exa_api_key_env):
            messages.append(f"{search.exa_api_key_env} is empty: exa answers on its keyless tier, which rate-limits "
                            "under load")
        elif name == "brave" and not environ.get(search.brave_api_key_env):
            messages.append(f"{search.brave_api_key_env} is empty: the brave provider will be skipped")
        elif name == "searxng" and not search.searxng_url:
            messages.append("web.search.searxngUrl is empty: the searxng provider will be skipped")
    return messages


def warn_missing_keys(search: Any, environ: Mapping[str, str], stream: TextIO | None = None,
                      state_dir: Path | None = None) -> list[str]:
    """Print each message not yet said for this state dir; returns the ones printed."""
    path = None if state_dir is None else state_dir / WARNED_FILE
    said = (load_state(path) or {}).get("warned", [])
    fresh = [m for m in missing_key_messages(search, environ) if m not in said]
    for message in fresh:
        print(f"atomic-agent: os.web.search: {message}", file=stream or sys.stderr)
    if fresh:
        save_state(path, {"warned": [*said, *fresh]})
    return fresh
