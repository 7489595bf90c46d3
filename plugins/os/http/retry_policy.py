"""The HTTP retry contract shared by `os.http.request` and `os.web.fetch`.

Retryable: 429, 502, 503, 504 and timeouts. Backoff doubles from the base delay, capped
at the max delay; a server's Retry-After wins over the schedule (both clamped to
10 s). Replays must not double-submit: an idempotent method (GET, HEAD, OPTIONS, TRACE,
PUT, DELETE per RFC 9110) is replayed on any retryable outcome; any other method (POST,
PATCH) only on 429/503 that carries a Retry-After — the server's explicit "I did not
process this, come back" — never on a bare 502/504 or a timeout.
"""

from __future__ import annotations

import attrs

from .retry_after import MAX_RETRY_AFTER_S

RETRYABLE_STATUS = frozenset({429, 502, 503, 504})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"})


@attrs.frozen
class RetryPolicy:
    max_retries: int = 2
    base_delay_s: float = 0.5
    max_delay_s: float = 4.0

    def backoff(self, retry_index: int, retry_after_s: float | None) -> float:
        """Seconds before retry number `retry_index` (0-based)."""
        if retry_after_s is not None:
            return max(0.0, min(retry_after_s, MAX_RETRY_AFTER_S))
        return min(self.base_delay_s * (2 ** retry_index), self.max_delay_s, MAX_RETRY_AFTER_S)


def may_replay(method: str, status: int | None, timed_out: bool, retry_after_s: float | None) -> bool:
    """Whether this outcome may be retried at all (the budget is checked by the caller)."""
    idempotent = method.upper() in IDEMPOTENT_METHODS
    if timed_out:
        return idempotent
    if status not in RETRYABLE_STATUS:
        return False
    if idempotent:
        return True
    return status in (429, 503) and retry_after_s is not None
