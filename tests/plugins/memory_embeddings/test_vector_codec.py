"""Vectors from a provider are checked before they reach the index: dimension, NaN, zeros."""

from __future__ import annotations

import math

import pytest

from atomic_agent.plugins.memory_embeddings.vector_codec import BadVectorError, checked_unit_vector, pack, unpack


@pytest.mark.parametrize("values,dim,reason", [([], None, "empty"), ([1.0, 2.0], 3, "dimension"),
                                               ([1.0, math.nan, 0.0], 3, "nan"), ([math.inf, 1.0], None, "nan"),
                                               ([0.0, 0.0], 2, "zero")])
def test_unusable_vectors_are_refused_with_their_reason(values: list[float], dim: int | None, reason: str) -> None:
    with pytest.raises(BadVectorError) as info:
        checked_unit_vector(values, dim)
    assert info.value.reason == reason


def test_vectors_are_unit_length_and_round_trip_as_float32() -> None:
    vector = checked_unit_vector([3.0, 4.0], 2)
    assert vector == pytest.approx([0.6, 0.8])
    assert unpack(pack(vector)) == pytest.approx([0.6, 0.8], abs=1e-7)
    assert len(pack(vector)) == 8
