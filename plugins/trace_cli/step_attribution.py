"""Which turn and step each trace event belongs to, from the step/turn brackets around it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs

from atomic_agent.api import trace_events

STEP_FINISHED, STEP_STARTED = trace_events.STEP_FINISHED, trace_events.STEP_STARTED
TURN_FINISHED, TURN_STARTED = trace_events.TURN_FINISHED, trace_events.TURN_STARTED


@attrs.frozen
class StepPosition:
    """The turn and step an event happened in; None outside any turn or step."""

    turn_index: int | None
    step: int | None

    def matches(self, step: int | None, turn: int | None) -> bool:
        """True when the event passes a `--step` / `--turn` filter (None means any)."""
        return (step is None or self.step == step) and (turn is None or self.turn_index == turn)

    def label(self) -> str:
        turn = "-" if self.turn_index is None else str(self.turn_index)
        step = "-" if self.step is None else str(self.step)
        return f"t{turn}.s{step}"


def attribute_steps(events: Iterable[Mapping[str, Any]]) -> Iterator[tuple[StepPosition, Mapping[str, Any]]]:
    """Pair every event with its position; an event's own turnIndex/step win over the brackets.

    Events such as prompt_captured or tool_invocation carry no step of their own: they take
    the step of the step_started before them, until the matching step_finished.
    """
    turn: int | None = None
    step: int | None = None
    for event in events:
        kind = event.get("type")
        if kind == TURN_STARTED:
            turn, step = _int_or(event.get("turnIndex"), turn), None
        elif kind == STEP_STARTED:
            turn, step = _int_or(event.get("turnIndex"), turn), _int_or(event.get("step"), None)
        position = StepPosition(_int_or(event.get("turnIndex"), turn), _int_or(event.get("step"), step))
        yield position, event
        if kind == STEP_FINISHED:
            step = None
        elif kind == TURN_FINISHED:
            turn, step = None, None


def _int_or(value: Any, fallback: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else fallback
