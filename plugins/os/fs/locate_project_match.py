"""Match a folder-name segment against candidate dirs: exact > prefix > substring on the
NFC-normalised, case-folded basename, after canonicalising so aliases of one dir
(`/tmp` vs `/private/tmp`) never read as two."""

from __future__ import annotations

import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import attrs

from atomic_agent.plugins.os.fs.locate_project_sources import Candidate

EXACT, PREFIX, SUBSTRING = 0, 1, 2
TIER_NAMES = {EXACT: "exact", PREFIX: "prefix", SUBSTRING: "substring"}


@attrs.frozen
class Match:
    path: Path  # canonical
    source: str
    tier: int


def normalise(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def query_segment(name: str) -> str:
    """The last path segment of what the model passed (`e:\\dev\\raylib\\` -> `raylib`)."""
    parts = [p for p in name.replace("\\", "/").split("/") if p.strip()]
    return normalise(parts[-1].strip()) if parts else ""


def tier_of(basename: str, query: str) -> int | None:
    base = normalise(basename)
    if base == query:
        return EXACT
    if base.startswith(query):
        return PREFIX
    if query in base:
        return SUBSTRING
    return None


def match_candidates(candidates: Sequence[Candidate], query: str) -> list[Match]:
    """Best tier first, then source priority (candidate order); one entry per canonical dir."""
    seen: set[str] = set()
    out: list[Match] = []
    for candidate in candidates:
        tier = tier_of(candidate.path.name, query)
        if tier is None:
            continue
        canonical = Path(os.path.realpath(candidate.path))
        if str(canonical) in seen:
            continue
        seen.add(str(canonical))
        out.append(Match(canonical, candidate.source, tier))
    return sorted(out, key=lambda m: m.tier)  # stable: source priority kept within a tier
