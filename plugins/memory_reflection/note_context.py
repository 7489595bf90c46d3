"""The context key a reflection note is stored with: the exchange it came from and the
day it was written. The notes index `context` for recall (at a lower weight than the
content) and never renders it into a prompt, so a terse note ("moved in May") is still
found by the words around it ("Lisbon", "apartment") and by its date ("May 2023").

On LoCoMo (benchmarks/locomo_recall.py) the neighbouring turns as context lift Recall@10
over a bare note, and the written date lifts single-hop and temporal questions further.
"""

from __future__ import annotations

import datetime as dt

CONTEXT_SIDE_CHARS = 1500  # per side; the store's context limit is 4000 characters


def written_on(epoch_ms: int) -> str:
    """`written Monday 8 May 2023` (UTC): the words a question about that time would use."""
    day = dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.timezone.utc)
    return f"written {day:%A} {day.day} {day:%B %Y}"


def _clip(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= CONTEXT_SIDE_CHARS else flat[: CONTEXT_SIDE_CHARS - 1] + "…"


def exchange_context(before: str, after: str, epoch_ms: int | None) -> str:
    """The text around a note (what was said before and after it) and, when known, its date."""
    parts = [p for p in (_clip(before), _clip(after)) if p]
    if epoch_ms is not None:
        parts.append(written_on(epoch_ms))
    return "\n".join(parts)
