"""The batch-wide cap on tool result text: shorten the oldest results first.

`agent.batchToolResultCharCap` bounds what one step's results add to the prompt. The
newest results are the ones the model is about to act on, so the lowest batch indexes
give way first, each cut marked so the model knows it saw less than the tool returned.
"""

from __future__ import annotations

from collections.abc import Sequence

TRIM_MARKER = "…[trimmed: batch result cap]"


def trim_batch_summaries(summaries: Sequence[str], cap: int) -> list[str]:
    """`summaries` in batch-index order, shortened (lowest index first) until they total <= cap."""
    total = sum(len(s) for s in summaries)
    out = list(summaries)
    for i, summary in enumerate(out):
        if total <= cap:
            break
        keep = max(0, len(summary) - (total - cap) - len(TRIM_MARKER))
        new_summary = summary[:keep] + TRIM_MARKER
        total -= len(summary) - len(new_summary)
        out[i] = new_summary
    return out
