"""llama-server's /embedding: one typed error (EmbeddingUnavailable) for every failure,
never fatal; a real `--embeddings` daemon for the happy path."""

from __future__ import annotations

import math

import pytest

from atomic_agent.api import EmbeddingUnavailable
from atomic_agent.plugins.llama_server.llama_embeddings import (
    LlamaEmbeddingProvider,
    build_llama_embedding_provider,
    parse_embedding_answer,
)
from tests.plugins.openai_compatible.tool_template_server import tool_template_server  # noqa: F401


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    return dot / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


def test_llama_embedding_answer_is_unnested_and_ordered() -> None:
    data = [{"index": 1, "embedding": [[0.0, 1.0]]}, {"index": 0, "embedding": [[1.0, 0.0]]}]
    assert parse_embedding_answer(data, 2) == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(EmbeddingUnavailable):
        parse_embedding_answer([{"index": 0, "embedding": []}], 1)


@pytest.mark.llama_server
async def test_an_embeddings_daemon_answers_one_vector_per_text(tool_template_server) -> None:  # noqa: F811
    provider = build_llama_embedding_provider({"id": "emb", "kind": "llama-server-embeddings",
                                               "url": tool_template_server.base_url}, None)
    try:
        vectors = await provider.embed(["hello world", "hello there world", "goodbye"])
    finally:
        await provider.close()
    assert len(vectors) == 3 and len({len(v) for v in vectors}) == 1 and len(vectors[0]) > 100
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])


@pytest.mark.llama_server
async def test_a_chat_server_without_embeddings_is_unavailable_not_fatal(llama_server) -> None:
    provider = LlamaEmbeddingProvider(llama_server.base_url)
    try:
        with pytest.raises(EmbeddingUnavailable) as info:
            await provider.embed(["x"])
    finally:
        await provider.close()
    assert info.value.status == 501 and "--embeddings" in str(info.value)
