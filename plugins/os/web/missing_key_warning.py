"""Say once, when the search tool is built, that a configured provider lacks its key.

Nothing hard-fails (the fallback chain works as designed), but the answers are weaker
than configured; a line per search would drown a long autonomous run.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO


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


def warn_missing_keys(search: Any, environ: Mapping[str, str], stream: TextIO | None = None) -> list[str]:
    messages = missing_key_messages(search, environ)
    for message in messages:
        print(f"atomic-agent: os.web.search: {message}", file=stream or sys.stderr)
    return messages
