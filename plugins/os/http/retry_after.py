"""Parse a Retry-After header value per RFC 9110 §10.2.3: delta-seconds or an HTTP-date.

One hostile header must not stall a turn, so every value is clamped to
MAX_RETRY_AFTER_S; negative, fractional and malformed values are ignored (None) and a
date in the past means "now" (0).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime

MAX_RETRY_AFTER_S = 10.0
_DELTA = re.compile(r"^[0-9]+$")
_LEGACY_FORMATS = ("%A, %d-%b-%y %H:%M:%S GMT", "%a %b %d %H:%M:%S %Y")  # RFC 850, asctime


def _parse_date(value: str) -> datetime | None:
    try:
        parsed = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        parsed = None
    if parsed is None:
        squeezed = re.sub(r"\s+", " ", value)
        for fmt in _LEGACY_FORMATS:
            try:
                parsed = datetime.strptime(squeezed, fmt)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc)


def parse_retry_after(value: str | None, now: datetime | None = None,
                      cap_s: float = MAX_RETRY_AFTER_S) -> float | None:
    """Seconds to wait, clamped to [0, cap_s]; None when the header is absent or unusable."""
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if _DELTA.match(text):
        return min(float(int(text[:12])), cap_s)  # a 1000-digit value is just "huge"
    if text[0] in "+-" or text[0].isdigit():
        return None  # "-5", "+3", "1.5": not delta-seconds, not a date
    when = _parse_date(text)
    if when is None:
        return None
    current = now or datetime.now(timezone.utc)
    return max(0.0, min((when - current).total_seconds(), cap_s))
