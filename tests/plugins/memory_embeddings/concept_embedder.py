"""A deterministic stand-in embedding model for the hybrid-recall tests.

Each dimension is a concept with its words, so a paraphrase that shares no word with a note
(only its concept) still lands near it: exactly the case BM25 cannot find and a real
sentence embedder can. Faults (down, slow, wrong dimension, NaN, wrong count) are switched
on per test.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

from atomic_agent.api import EmbeddingUnavailable

CONCEPTS: tuple[frozenset[str], ...] = (
    frozenset({"guitar", "instrument", "music", "musical", "play", "plays", "violin", "piano"}),
    frozenset({"dog", "puppy", "pet", "pets", "animal", "cat"}),
    frozenset({"deploy", "deploys", "release", "ship", "production", "rollout"}),
    frozenset({"paris", "france", "trip", "travel", "vacation", "holiday", "abroad"}),
    frozenset({"allergy", "allergic", "peanuts", "food", "eat", "diet"}),
    frozenset({"birthday", "born", "age", "anniversary"}),
)
DIM = len(CONCEPTS) + 1  # the last dimension is a small constant, so no text is all zeros
_WORD = re.compile(r"\w+")


def concept_vector(text: str) -> list[float]:
    words = _WORD.findall(text.lower())
    vector = [float(sum(w in concept for w in words)) for concept in CONCEPTS]
    return vector + [0.05]


class ConceptEmbedder:
    def __init__(self, model_id: str = "concepts-v1") -> None:
        self.model_id = model_id
        self.down = False
        self.delay_s = 0.0
        self.dim_override: int | None = None
        self.nan = False
        self.calls: list[list[str]] = []
        self.gate: asyncio.Event | None = None  # when set, embed() waits for it

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        if self.gate is not None:
            await self.gate.wait()
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if self.down:
            raise EmbeddingUnavailable("cannot reach the embedding llama-server (ConnectError)")
        out = []
        for text in texts:
            vector = concept_vector(text)
            if self.dim_override is not None:
                vector = (vector * 10)[: self.dim_override]
            if self.nan:
                vector[0] = float("nan")
            out.append(vector)
        return out

    async def close(self) -> None:
        return None


def embedder_plugin(embedder: ConceptEmbedder) -> Any:
    """A plugin object offering `embedder` as the managed-daemon service the llama_server plugin owns."""
    from atomic_agent.api import ServiceSpec, hookimpl

    class EmbedderPlugin:
        @hookimpl
        def register_services(self) -> list[Any]:
            return [ServiceSpec("llama_embeddings", lambda _runtime: embedder)]

    return EmbedderPlugin()
