"""The read guard applied to grep's matches: both engines read files on their own, so each
matching file is checked before its lines leave the tool.

A match in a secret file (`.env` of the agent, by path or hard-link inode) is dropped at
every level; a match in a credential store is dropped unless the search itself was
approved as a sensitive read of that store (grep rooted inside it). The summary says how
many files were withheld and why, never what they held.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import attrs

from atomic_agent.plugins.os.fs.grep_query import GrepMatch, GrepOutcome, GrepQuery
from atomic_agent.plugins.os.fs.read_guard import is_secret, sensitive_store


@attrs.frozen
class GuardedMatches:
    outcome: GrepOutcome
    secret_files: int = 0
    store_files: int = 0

    def note(self) -> str:
        notes = []
        if self.secret_files:
            notes.append(f"{self.secret_files} file(s) holding the runtime's secrets were not searched")
        if self.store_files:
            notes.append(f"{self.store_files} file(s) in credential stores were withheld (read one with os.fs.read "
                         "to be asked)")
        return "; ".join(notes)


def _file_of(query: GrepQuery, rel: str) -> Path:
    return query.root if query.root.is_file() else query.root / rel


def guard_matches(outcome: GrepOutcome, query: GrepQuery, trust: Sequence[Path],
                  approved_store: str | None) -> GuardedMatches:
    verdicts: dict[str, str] = {}  # rel path -> "ok" | "secret" | "store"
    for rel in {m.path for m in outcome.matches}:
        path = _file_of(query, rel)
        try:
            st = os.stat(path)
        except OSError:
            verdicts[rel] = "ok"
            continue
        if is_secret(path, st, trust):
            verdicts[rel] = "secret"
        elif (store := sensitive_store(path, st)) is not None and store != approved_store:
            verdicts[rel] = "store"
        else:
            verdicts[rel] = "ok"
    kept: tuple[GrepMatch, ...] = tuple(m for m in outcome.matches if verdicts[m.path] == "ok")
    guarded = attrs.evolve(outcome, matches=kept)
    return GuardedMatches(guarded, sum(v == "secret" for v in verdicts.values()),
                          sum(v == "store" for v in verdicts.values()))
