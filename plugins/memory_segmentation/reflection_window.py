"""Sliding-window reflection (memory v2.5 phase B): reflect every K turns over the last W
user/reply pairs instead of after every pair.

The cadence is a per-turn check on the session's own turn count (no timer, no state
shared between sessions): a turn that ended with a reply fires when its count is a
multiple of K; a turn that ended with `finish` always fires (the final flush), unless the
session has no complete pair at all. The window is chronological and holds complete pairs
only.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.api import ExchangePair

SKIP_METRIC = "agent.memory.reflection.segmentation"


class ReflectionWindow:
    def __init__(self, cfg: Any) -> None:
        self.cfg = cfg

    @property
    def enabled(self) -> bool:
        return bool(self.cfg.enabled)

    def window(self, digest: Any) -> tuple[ExchangePair, ...] | None:
        """The pairs to reflect over now (oldest first), or None: not at a cadence point."""
        pairs = list(digest.history)
        if digest.user_text.strip() and digest.reply_text.strip():
            pairs.append(ExchangePair(digest.user_text, digest.reply_text))
        if not pairs:
            return None
        turn_count = digest.turn_index + 1
        if digest.reason != "finish" and turn_count % self.cfg.trigger_every_turns != 0:
            return None
        return tuple(pairs[-self.cfg.window_turns:])
