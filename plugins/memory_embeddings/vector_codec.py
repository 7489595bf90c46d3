"""Checking and packing embedding vectors: float32 little-endian blobs, unit length.

A vector is refused (EmbeddingUnavailable, so callers degrade) when it is empty, has the
wrong dimension, holds NaN or infinity, or has zero length; otherwise it is normalised so a
dot product is a cosine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from atomic_agent.api import EmbeddingUnavailable


class BadVectorError(EmbeddingUnavailable):
    """A provider answered, but with a vector that cannot be used; `reason` names why."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


def checked_unit_vector(values: Sequence[float], dim: int | None) -> list[float]:
    if not values:
        raise BadVectorError("the embedding is empty", "empty")
    if dim is not None and len(values) != dim:
        raise BadVectorError(f"the embedding has {len(values)} dimensions, the index holds {dim}; run "
                             "`atomic-agent memory reembed` after changing the embedding model", "dimension")
    if not all(math.isfinite(v) for v in values):
        raise BadVectorError("the embedding holds NaN or infinite values", "nan")
    norm = math.sqrt(sum(v * v for v in values))
    if norm == 0.0:
        raise BadVectorError("the embedding is all zeros", "zero")
    return [v / norm for v in values]


def pack(vector: Sequence[float]) -> bytes:
    import numpy as np

    return np.asarray(vector, dtype="<f4").tobytes()


def unpack(blob: bytes) -> list[float]:
    import numpy as np

    return np.frombuffer(blob, dtype="<f4").astype(float).tolist()
