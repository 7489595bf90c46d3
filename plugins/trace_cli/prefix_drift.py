"""Compare each recorded stable-prefix hash of a trace with the current runtime's hash."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import attrs

from atomic_agent.api import trace_events

from .step_attribution import attribute_steps

PROMPT_CAPTURED = trace_events.PROMPT_CAPTURED

DriftStatus = Literal["match", "drift", "unrecorded"]


@attrs.frozen
class StepDrift:
    """One prompt_captured event checked against the current prefix hash.

    `unrecorded` means the event carries no stablePrefixHash, so nothing can be compared.
    """

    seq: int | None
    turn_index: int | None
    step: int | None
    recorded_hash: str | None
    current_hash: str
    status: DriftStatus

    @property
    def drifted(self) -> bool:
        return self.status == "drift"

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "turnIndex": self.turn_index, "step": self.step,
                "recordedHash": self.recorded_hash, "currentHash": self.current_hash, "status": self.status}


def compare_prefix_hashes(events: Iterable[Mapping[str, Any]], current_hash: str, *,
                          step: int | None = None, turn: int | None = None) -> list[StepDrift]:
    """A StepDrift per prompt_captured event (optionally only of one step / turn), in file order."""
    results = []
    for position, event in attribute_steps(events):
        if event.get("type") != PROMPT_CAPTURED or not position.matches(step, turn):
            continue
        recorded = event.get("stablePrefixHash")
        recorded = recorded if isinstance(recorded, str) and recorded else None
        status: DriftStatus = "unrecorded" if recorded is None else ("match" if recorded == current_hash else "drift")
        seq = event.get("seq")
        results.append(StepDrift(seq=seq if isinstance(seq, int) else None, turn_index=position.turn_index,
                                 step=position.step, recorded_hash=recorded, current_hash=current_hash,
                                 status=status))
    return results
