"""Sliding-window reflection (memory v2.5 phase B): reflect every K turns over the last W
user/reply pairs instead of after every pair.

The cadence is a per-turn check on the session's own turn count (no timer, no state
shared between sessions): a turn that ended with a reply fires when its count is a
multiple of K; a turn that ended with `finish` always fires (the final flush), unless the
session has no complete pair at all. The window is chronological and holds complete pairs
only.

A turn that did not fire leaves its session's window pending; at a graceful stop the
reflection phase takes the pending windows (`take_pending`, the newest sessions first, at
most `stopFlushSessions`) and reflects over the pairs since each session's last cadence
point, so the turns between two cadence points are not lost when the host stops.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import attrs

from atomic_agent.api import ExchangePair

SKIP_METRIC = "agent.memory.reflection.segmentation"
PENDING_SESSIONS_KEPT = 1024  # sessions whose pending window is remembered (least recently used dropped first)


@attrs.frozen
class PendingWindow:
    """A session's turns since its last cadence point: the newest turn's digest and its pairs."""

    digest: Any
    pairs: tuple[ExchangePair, ...]


def _pairs(digest: Any) -> list[ExchangePair]:
    pairs = list(digest.history)
    if digest.user_text.strip() and digest.reply_text.strip():
        pairs.append(ExchangePair(digest.user_text, digest.reply_text))
    return pairs


class ReflectionWindow:
    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg
        # session id -> (newest digest not reflected, the first turn index not reflected)
        self._pending: OrderedDict[str, tuple[Any, int]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return bool(self.cfg.enabled)

    def window(self, digest: Any) -> tuple[ExchangePair, ...] | None:
        """The pairs to reflect over now (oldest first), or None: not at a cadence point."""
        pairs = _pairs(digest)
        if not pairs:
            return None
        turn_count = digest.turn_index + 1
        if digest.reason != "finish" and turn_count % self.cfg.trigger_every_turns != 0:
            self._remember(digest)
            return None
        self._pending.pop(digest.session_id, None)
        return tuple(pairs[-self.cfg.window_turns:])

    def _remember(self, digest: Any) -> None:
        known = self._pending.get(digest.session_id)
        if known is None:
            self._pending[digest.session_id] = (digest, digest.turn_index)
        elif known[0].turn_index > digest.turn_index:  # an older turn's late digest: it only widens the window
            self._pending[digest.session_id] = (known[0], min(known[1], digest.turn_index))
        else:
            self._pending[digest.session_id] = (digest, known[1])
        self._pending.move_to_end(digest.session_id)
        while len(self._pending) > PENDING_SESSIONS_KEPT:
            self._pending.popitem(last=False)

    def take_pending(self, max_sessions: int | None = None) -> list[PendingWindow]:
        """The pending windows, newest session first, at most `max_sessions` (default
        `stopFlushSessions`), each the pairs since its last cadence point (at most W);
        forgotten once taken, so a window is flushed at most once."""
        limit = self.cfg.stop_flush_sessions if max_sessions is None else max_sessions
        out: list[PendingWindow] = []
        for digest, first in reversed(self._pending.values()):
            if len(out) >= limit:
                break
            since = digest.turn_index - first + 1
            pairs = _pairs(digest)
            if pairs:
                out.append(PendingWindow(digest, tuple(pairs[-min(since, self.cfg.window_turns):])))
        self._pending.clear()
        return out
