"""The harness proves itself: each deliberate bug (tests/chaos/chaos_mutants, injected here,
never present in product code) is caught by every tier that should catch it, within that
tier's default budget."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from tests.chaos.chaos_machine import ChaosMachine
from tests.chaos.chaos_mutants import MUTANTS, inject_mutant
from tests.chaos.chaos_run import run_seed
from tests.chaos.exhaustive import SCENARIOS, crash_points, run_point
from tests.chaos.mutant_hunt import SIGNATURES, first_catch
from tests.chaos.suite_specs import CRASH_RECOVERY, QUEUES

SEEDED = {"ack_before_commit": CRASH_RECOVERY, "rerun_non_durable": CRASH_RECOVERY, "split_claim": QUEUES}
EXHAUSTIVE = {"ack_before_commit": "send_then_queued_send", "rerun_non_durable": "send_then_queued_send",
              "split_claim": "send_with_steer"}


@pytest.mark.parametrize("mutant", sorted(SEEDED))
def test_seeded_tier_catches_the_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inject_mutant(monkeypatch, mutant)
    spec = SEEDED[mutant]
    assert first_catch(mutant, (lambda s=s: run_seed(s, spec) for s in range(60))) is not None


@pytest.mark.parametrize("mutant", sorted(EXHAUSTIVE))
def test_exhaustive_tier_catches_the_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    ops = SCENARIOS[EXHAUSTIVE[mutant]]
    points = list(crash_points(ops))  # counted with the mutant off: the clean run's commits
    inject_mutant(monkeypatch, mutant)
    assert first_catch(mutant, (lambda p=p: run_point(ops, p) for p in points)) is not None


# no shrinking: the question is only whether the machine finds the bug within its budget
MACHINE_HUNT = settings(max_examples=40, stateful_step_count=12, deadline=None, derandomize=True, database=None,
                        suppress_health_check=list(HealthCheck), phases=(Phase.explicit, Phase.generate))


class _Caught(Exception):
    """The machine broke a promise the way this mutant does."""


def _hunting(mutant: str) -> type[ChaosMachine]:
    """The machine, failing only on the mutant's own signature (an unrelated known bug is not a catch)."""

    class Hunt(ChaosMachine):
        def teardown(self) -> None:
            try:
                super().teardown()
            except AssertionError as failure:
                if SIGNATURES[mutant].search(str(failure)):
                    raise _Caught(str(failure)[:2000]) from None

    return Hunt


@pytest.mark.parametrize("mutant", MUTANTS)
def test_state_machine_tier_catches_the_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inject_mutant(monkeypatch, mutant)
    with pytest.raises(_Caught):
        run_state_machine_as_test(_hunting(mutant), settings=MACHINE_HUNT)


def test_without_an_injected_mutant_the_seeded_run_is_clean() -> None:
    assert run_seed(0, CRASH_RECOVERY).violations == []


def test_product_code_never_imports_the_mutants() -> None:
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    offenders = [str(path.relative_to(repo)) for root in ("core", "plugins", "contrib")
                 for path in (repo / root).rglob("*.py") if "mutant" in path.read_text()]
    assert offenders == []
