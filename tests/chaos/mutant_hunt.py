"""Does a tier catch a mutant? Each mutant has a signature among the checker's violations,
so an unrelated known bug can never pass for a catch."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tests.chaos.chaos_run import RunOutcome

SIGNATURES = {
    "ack_before_commit": re.compile(r"was acknowledged .* but is not durable|acknowledged message \S+ is in the "
                                    r"conversation 0 times"),
    "rerun_non_durable": re.compile(r"side effect \S+ ran [2-9] times"),
    "split_claim": re.compile(r"message steer-\S+ is in the conversation [2-9] times"),
}


def caught(mutant: str, outcome: RunOutcome) -> bool:
    return any(SIGNATURES[mutant].search(v) for v in outcome.violations)


def first_catch(mutant: str, runs: Iterable[Callable[[], RunOutcome]]) -> int | None:
    """How many runs it took to catch the mutant (None: never caught)."""
    for n, run in enumerate(runs, 1):
        if caught(mutant, run()):
            return n
    return None
