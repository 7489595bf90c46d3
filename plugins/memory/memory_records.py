"""The rows the memory stores hand out: profile facts and notes (times in epoch ms)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from atomic_agent.api import store_clock


@attrs.frozen
class ProfileFact:
    """One version of a fact. Active when `superseded_by` is None; history keeps the rest."""

    id: int
    key: str
    value: str
    pinned: bool
    keywords: tuple[str, ...]
    source: str
    valid_from: int
    superseded_by: int | None
    supersedes: int | None
    created_at: int
    updated_at: int
    vote_score: float = 0.0  # turn-outcome votes (see recall_votes); at -threshold it leaves ### profile

    @property
    def active(self) -> bool:
        return self.superseded_by is None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "key": self.key, "value": self.value, "pinned": self.pinned,
                "keywords": list(self.keywords), "source": self.source, "validFrom": store_clock.iso_ms(self.valid_from),
                "supersededBy": self.superseded_by, "supersedes": self.supersedes, "active": self.active}


@attrs.frozen
class Note:
    """A freeform note. `context` is indexed for recall but never rendered into a prompt."""

    id: int
    content: str
    tags: tuple[str, ...]
    source: str
    scope: str
    working_dir: str | None
    created_at: int
    updated_at: int
    context: str = ""
    session_id: str | None = None
    meta: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "content": self.content, "tags": list(self.tags),
                               "source": self.source, "scope": self.scope, "workingDir": self.working_dir,
                               "createdAt": store_clock.iso_ms(self.created_at), "updatedAt": store_clock.iso_ms(self.updated_at)}
        if self.session_id:
            out["sessionId"] = self.session_id
        if self.meta:
            out["meta"] = dict(self.meta)
        return out


@attrs.frozen
class RecallHit:
    """A note found by full-text recall; lower `score` is better (FTS5 bm25 order)."""

    note: Note
    score: float


@attrs.frozen
class StoreOutcome:
    """What `NoteStore.store` did: the new note and the ids FIFO eviction removed."""

    note: Note
    evicted: tuple[int, ...] = ()
