"""The fusion point of hybrid recall: a convex blend of scaled BM25 and scaled cosine."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.memory.recall_fusion import FusionWeights, blend


def test_a_note_found_by_both_sides_outranks_one_found_by_either() -> None:
    ranked = blend({1: -4.0, 2: -2.0}, {2: 0.9, 3: 0.95, 1: 0.1}, FusionWeights(0.5, 0.5))
    assert [i for i, _ in ranked] == [2, 3, 1]  # 3 and 1 tie at 0.5: the newer id first
    scores = dict(ranked)
    assert scores[1] == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert scores[2] == pytest.approx(0.5 * 0.5 + 0.5 * (0.9 - 0.1) / 0.85)
    assert scores[3] == pytest.approx(0.5 * 1.0)


def test_weights_decide_between_the_sides() -> None:
    lexical_only = blend({1: -3.0}, {2: 0.8, 1: 0.2}, FusionWeights(1.0, 0.0))
    vector_only = blend({1: -3.0}, {2: 0.8, 1: 0.2}, FusionWeights(0.0, 1.0))
    assert lexical_only[0][0] == 1 and vector_only[0][0] == 2


def test_empty_sides_and_ties_are_ordered_newest_first() -> None:
    assert blend({}, {}, FusionWeights()) == []
    assert [i for i, _ in blend({}, {4: 0.5, 9: 0.5}, FusionWeights())] == [9, 4]


def test_weights_outside_the_unit_interval_are_refused() -> None:
    with pytest.raises(ValueError, match="vector must be in"):
        FusionWeights(0.5, 1.5)
