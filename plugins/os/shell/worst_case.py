"""What a command could do when some of its arguments are only known at run time.

An argument from a command substitution, `read` or a loop without a list may be anything.
The guard tries the worst stand-ins — `/`, a raw disk, `/proc/sysrq-trigger` — for every
such argument and redirect target (an unquoted one may also split into `-rf /`): when a
hardline rule would fire for one of them, the command cannot be judged and asks at every
level instead of running on a guess.
"""

from __future__ import annotations

import attrs

from .command_segments import Segment
from .command_unwrap import UNKNOWN_ARG, SimpleCommand
from .guard_records import GuardScope, RuleHit
from .hardline_rules import hardline_hits

STAND_INS = ("/", "/dev/sda", "/proc/sysrq-trigger")


def _worst(word: str, stand_in: str) -> list[str]:
    if word == UNKNOWN_ARG:
        return ["-rf", stand_in]
    head = word[:word.index(UNKNOWN_ARG)]
    if "=" in head and not head.startswith("/"):  # `of=$DISK`: keep the key
        return [head[:head.index("=") + 1] + stand_in]
    return [stand_in]  # `build/$X` is `/` when X is `../..`


def worst_case_hits(cmd: SimpleCommand, segment: Segment, scope: GuardScope) -> list[RuleHit]:
    unknown_args = any(UNKNOWN_ARG in a for a in cmd.args)
    unknown_targets = any(UNKNOWN_ARG in t for _, t in segment.redirects)
    if not unknown_args and not unknown_targets:
        return []
    for stand_in in STAND_INS:
        args = [w for a in cmd.args for w in (_worst(a, stand_in) if UNKNOWN_ARG in a else [a])]
        redirects = tuple((op, stand_in if UNKNOWN_ARG in t else t) for op, t in segment.redirects)
        hits = hardline_hits(attrs.evolve(cmd, args=tuple(args)), Segment(segment.words, redirects), scope)
        if hits:
            return [RuleHit("undecidable.unresolved_argument",
                            f"{cmd.program} gets an argument only known when it runs; were it {stand_in}: "
                            f"{hits[0].reason}")]
    return []
