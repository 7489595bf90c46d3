"""Tier (f): the process is killed while approvals are pending (approval_kill_run), over
CHAOS_APPROVAL_SEEDS seeds (default 2,000): no frozen call runs twice, every pending
approval survives each kill, an answer after a restart resumes the turn.

The seeds run in one test, fanned out over a fork pool of up to two workers (CI has two
cores), so pytest adds nothing per seed; the test prints seeds/s and the tier's runtime.
A failing seed is named: put it in REGRESSION_SEEDS to run it alone, always."""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from tests.chaos.approval_kill_run import SeedOutcome, run_approval_seed
from tests.chaos.chaos_mutants import APPROVAL_MUTANTS, inject_mutant
from tests.chaos.chaos_run import scratch_root
from tests.chaos.chaos_seeds import seed_count

SEEDS = seed_count(2000, "CHAOS_APPROVAL_SEEDS")
REGRESSION_SEEDS: list[int] = []
MAX_WORKERS = 2


def _run_seeds(seeds: list[int]) -> list[SeedOutcome]:
    outcomes = []
    # a life killed mid-resume makes recovery print "a resumed turn failed: SimulatedCrash" (as it
    # should for a real failure); over 2,000 seeds that is noise, and the invariants say what counts
    with tempfile.TemporaryDirectory(prefix="approval-kills-", dir=scratch_root()) as tmp, \
            contextlib.redirect_stderr(io.StringIO()):
        for seed in seeds:
            root = Path(tmp) / f"seed{seed}"
            outcomes.append(run_approval_seed(seed, root))
            shutil.rmtree(root, ignore_errors=True)
    return outcomes


def _explain(outcome: SeedOutcome) -> str:
    return f"seed {outcome.seed} ({outcome.lives} lives): " + "; ".join(outcome.violations[:5])


@pytest.mark.parametrize("seed", REGRESSION_SEEDS)
def test_approval_kill_regression_seed_holds(seed: int) -> None:
    (outcome,) = _run_seeds([seed])
    assert not outcome.violations, _explain(outcome)


def test_killed_while_approvals_are_pending_no_call_runs_twice_and_every_answer_resumes_its_turn() -> None:
    started, cpu_before = time.perf_counter(), os.times()
    workers = max(1, min(MAX_WORKERS, os.cpu_count() or 1, SEEDS))
    shares = [list(range(SEEDS))[w::workers] for w in range(workers)]
    if workers == 1:
        outcomes = _run_seeds(shares[0])
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            outcomes = [o for part in pool.map(_run_seeds, shares) for o in part]
    elapsed, cpu_after = time.perf_counter() - started, os.times()
    cpu = sum(getattr(cpu_after, f) - getattr(cpu_before, f) for f in ("user", "system", "children_user",
                                                                       "children_system"))
    bad = [o for o in sorted(outcomes, key=lambda o: o.seed) if o.violations]
    print(f"\napproval kill tier: {SEEDS} seeds in {elapsed:.1f} s = {SEEDS / elapsed:.1f} seeds/s on {workers} "
          f"worker(s), {cpu:.1f} cpu-s = {SEEDS / max(cpu, 1e-9):.1f} seeds per cpu-s; {sum(o.lives for o in outcomes)} lives, {sum(o.kills_pending for o in outcomes)} kills with "
          f"approvals pending, {sum(o.write_crashes for o in outcomes)} crashes at a write, "
          f"{sum(o.answered for o in outcomes)} answers from another surface")
    assert len(outcomes) == SEEDS
    assert sum(o.kills_pending for o in outcomes) >= SEEDS // 2, "the tier must actually kill with approvals pending"
    assert not bad, f"{len(bad)} seed(s) broke an invariant:\n" + "\n".join(_explain(o) for o in bad[:10])


APPROVAL_SIGNATURES = {
    "interrupt_parked": re.compile(r"waited on an approval at a kill and ended \[.*'interrupted'"),
    "reuse_approval": re.compile(r"the frozen call ran [2-9] times"),
}
MUTANT_BUDGET = 300  # seeds a mutant must be caught within


@pytest.mark.parametrize("mutant", APPROVAL_MUTANTS)
def test_the_approval_kill_tier_catches_the_mutant(mutant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    inject_mutant(monkeypatch, mutant)
    with tempfile.TemporaryDirectory(prefix="approval-mutant-", dir=scratch_root()) as tmp, \
            contextlib.redirect_stderr(io.StringIO()):
        for seed in range(MUTANT_BUDGET):
            outcome = run_approval_seed(seed, Path(tmp) / f"seed{seed}")
            if any(APPROVAL_SIGNATURES[mutant].search(v) for v in outcome.violations):
                print(f"\n{mutant} caught at seed {seed}")
                return
    raise AssertionError(f"the approval kill tier did not catch {mutant} within {MUTANT_BUDGET} seeds")
