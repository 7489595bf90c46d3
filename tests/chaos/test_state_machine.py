"""Tier (d): a Hypothesis RuleBasedStateMachine over send / steer / stop / crash / recover
(every crash is followed by a recovering life). Derandomized, so CI is reproducible;
`CHAOS_HYPOTHESIS_EXAMPLES` widens the search."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.chaos.chaos_machine import ChaosMachine

EXAMPLES = int(os.environ.get("CHAOS_HYPOTHESIS_EXAMPLES", 25))
SETTINGS = settings(max_examples=EXAMPLES, stateful_step_count=12, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck), database=None)


def test_no_sequence_of_sends_steers_stops_and_crashes_breaks_a_promise() -> None:
    run_state_machine_as_test(ChaosMachine, settings=SETTINGS)
