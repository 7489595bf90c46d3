"""Session grants: in-memory point exceptions over the standing level, keyed by session id.

A grant silences one category (`s`) or one command shape (`a`) for the session that made
it, never another. It may be bounded by time (`ttl_s`) or by count (`uses`) and then
expires by itself. Grants never persist: a new process starts with none.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import attrs

CATEGORY = "category"
SHAPE = "shape"


@attrs.define
class SessionGrant:
    kind: str  # CATEGORY | SHAPE
    value: str  # the category name, or the normalised binary
    category: str  # the category the grant was made under (a shape grant is scoped to it too)
    created_at: float
    expires_at: float | None = None
    uses_left: int | None = None

    def live(self, now: float) -> bool:
        if self.expires_at is not None and now >= self.expires_at:
            return False
        return self.uses_left is None or self.uses_left > 0

    def describe(self) -> str:
        return f"{self.kind}:{self.value}"

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "value": self.value, "category": self.category, "expiresAt": self.expires_at,
                "usesLeft": self.uses_left}


class SessionGrants:
    """Grants per session id; `match` consumes one use of the grant it returns."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._by_session: dict[str, list[SessionGrant]] = {}

    def add(self, session_id: str, kind: str, value: str, category: str, ttl_s: float | None = None,
            uses: int | None = None) -> SessionGrant:
        if kind not in (CATEGORY, SHAPE):
            raise ValueError(f"grant kind must be {CATEGORY!r} or {SHAPE!r}, got {kind!r}")
        now = self._clock()
        grant = SessionGrant(kind, value, category, now, None if ttl_s is None else now + ttl_s, uses)
        grants = [g for g in self._by_session.get(session_id, []) if (g.kind, g.value) != (kind, value)]
        grants.append(grant)
        self._by_session[session_id] = grants
        return grant

    def match(self, session_id: str, category: str, command_shape: str | None) -> SessionGrant | None:
        """The grant covering this request in this session (one use consumed), or None."""
        now = self._clock()
        grants = [g for g in self._by_session.get(session_id, []) if g.live(now)]
        self._by_session[session_id] = grants
        for grant in grants:
            covers = (grant.kind == CATEGORY and grant.value == category) or (
                grant.kind == SHAPE and command_shape is not None and grant.value == command_shape
                and grant.category == category)
            if covers:
                if grant.uses_left is not None:
                    grant.uses_left -= 1
                return grant
        return None

    def revoke(self, session_id: str, kind: str, value: str) -> bool:
        """Drop one grant (as `snapshot` lists it: kind and value); False when there is none."""
        grants = self._by_session.get(session_id, [])
        kept = [g for g in grants if (g.kind, g.value) != (kind, value)]
        if len(kept) == len(grants):
            return False
        self._by_session[session_id] = kept
        return True

    def clear(self, session_id: str | None = None) -> None:
        """Drop one session's grants (on session change), or every session's."""
        if session_id is None:
            self._by_session.clear()
        else:
            self._by_session.pop(session_id, None)

    def snapshot(self, session_id: str | None = None) -> list[dict[str, object]]:
        """Live grants (one session's, or the union over sessions) as plain dicts."""
        now = self._clock()
        sessions = [session_id] if session_id is not None else sorted(self._by_session)
        out: list[dict[str, object]] = []
        for sid in sessions:
            out.extend({"sessionId": sid, **g.as_dict()} for g in self._by_session.get(sid, []) if g.live(now))
        return out
