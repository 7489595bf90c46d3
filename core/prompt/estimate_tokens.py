"""A cheap token estimate for when no tokenizer is reachable (marked as estimated)."""

import math


def estimate_tokens(text: str) -> int:
    """max(chars / 3.6, words * 1.4), rounded up: errs high, so budgets stay safe."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 3.6), math.ceil(len(text.split()) * 1.4))
