"""What the loop detector says about one prospective call or one batch."""

from __future__ import annotations

from typing import Literal

import attrs

LoopLevel = Literal["none", "warn", "critical"]
LoopDetectorName = Literal["generic_repeat", "no_progress", "wandering"]

BATCH_LOOP_LABEL = "<batch>"  # the `tool` of verdicts about a whole batch


@attrs.frozen
class LoopVerdict:
    """`level` "warn" is advisory (the call runs, `notice` goes to the next prompt);
    "critical" means the gate must veto the call. `breaker` is set when committing the
    call trips the loop breaker (wandering escalation): the turn then ends with a forced
    graceful reply. `count` is the number that crossed the threshold (repeats, streak or
    spread)."""

    level: LoopLevel = "none"
    detector: LoopDetectorName | None = None
    notice: str | None = None
    tool: str = ""
    count: int = 0
    breaker: bool = False

    @property
    def vetoes(self) -> bool:
        return self.level == "critical"

    @property
    def trace_level(self) -> str:
        """The `level` of a `loop_detected` trace event: warn | critical | breaker."""
        return "breaker" if self.breaker else self.level


NO_LOOP = LoopVerdict()
