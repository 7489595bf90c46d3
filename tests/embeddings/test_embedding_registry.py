"""Embedding providers: one typed error for every failure, never fatal; real daemons for the happy path."""

from __future__ import annotations

import math

import pytest

from atomic_agent.api import EmbeddingUnavailable, ProviderCapabilities, ProviderKind
from atomic_agent.embeddings.embedding_registry import EmbeddingRegistry
from atomic_agent.plugins.llama_server.llama_embeddings import (
    LlamaEmbeddingProvider,
    build_llama_embedding_provider,
    parse_embedding_answer,
)
from atomic_agent.providers.llm_config_reader import structure_llm_block


class FakeEmbedder:
    def __init__(self, answer=None, error: Exception | None = None) -> None:
        self.answer, self.error, self.closed = answer, error, False

    async def embed(self, texts):
        if self.error is not None:
            raise self.error
        return self.answer if self.answer is not None else [[1.0, 0.0] for _ in texts]

    async def close(self):
        self.closed = True


def kind(name: str, factory) -> ProviderKind:
    return ProviderKind(name=name, factory=factory, capabilities=ProviderCapabilities("grammar", embeddings=True))


def registry(llm: dict, **factories) -> EmbeddingRegistry:
    kinds = {name: kind(name, f) for name, f in factories.items()}
    return EmbeddingRegistry(kinds, structure_llm_block(llm), runtime=None)


ONE = {"providers": [{"id": "e", "kind": "emb"}], "activeEmbeddingProvider": "e"}


async def test_no_embedding_provider_configured_is_typed_not_fatal():
    reg = registry({})
    assert not reg.configured
    with pytest.raises(EmbeddingUnavailable, match="activeEmbeddingProvider"):
        await reg.embed(["a"])
    assert isinstance(await reg.try_embed(["a"]), EmbeddingUnavailable)


async def test_unknown_kind_and_failing_factory_are_typed():
    with pytest.raises(EmbeddingUnavailable, match="no plugin registers"):
        await registry(ONE).embed(["a"])

    def broken(entry, runtime):
        raise ValueError("needs a url")

    with pytest.raises(EmbeddingUnavailable, match="needs a url"):
        await registry(ONE, emb=broken).embed(["a"])


async def test_a_provider_without_embed_is_typed():
    with pytest.raises(EmbeddingUnavailable, match="does not produce embeddings"):
        await registry(ONE, emb=lambda e, r: object()).embed(["a"])


async def test_any_provider_error_becomes_embedding_unavailable_with_status():
    class Http(Exception):
        status = 503

    with pytest.raises(EmbeddingUnavailable) as info:
        await registry(ONE, emb=lambda e, r: FakeEmbedder(error=Http("down"))).embed(["a"])
    assert info.value.status == 503 and info.value.provider_id == "e"


@pytest.mark.parametrize("answer", [[[1.0]], [[1.0], [1.0, 2.0]], [[], []], "nope", [["x"], ["y"]]])
async def test_malformed_answers_are_typed(answer):
    with pytest.raises(EmbeddingUnavailable):
        await registry(ONE, emb=lambda e, r: FakeEmbedder(answer=answer)).embed(["a", "b"])


async def test_vectors_come_back_one_per_text_and_set_active_closes_the_old_one():
    made = []

    def factory(entry, runtime):
        made.append(FakeEmbedder())
        return made[-1]

    reg = registry({"providers": [{"id": "e", "kind": "emb"}, {"id": "f", "kind": "emb"}],
                    "activeEmbeddingProvider": "e"}, emb=factory)
    assert await reg.embed(["a", "b"]) == [[1.0, 0.0], [1.0, 0.0]]
    await reg.set_active("f")
    assert made[0].closed and reg.active_id == "f"
    await reg.embed(["c"])
    await reg.close()
    assert made[1].closed


def test_llama_embedding_answer_is_unnested_and_ordered():
    data = [{"index": 1, "embedding": [[0.0, 1.0]]}, {"index": 0, "embedding": [[1.0, 0.0]]}]
    assert parse_embedding_answer(data, 2) == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(EmbeddingUnavailable):
        parse_embedding_answer([{"index": 0, "embedding": []}], 1)


def cosine(a, b) -> float:
    return sum(x * y for x, y in zip(a, b)) / (math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b)))


@pytest.mark.llama_server
async def test_llama_server_embedding_daemon_through_the_registry(tool_template_server):
    reg = EmbeddingRegistry({"llama-server-embeddings": kind("llama-server-embeddings", build_llama_embedding_provider)},
                            structure_llm_block({"providers": [{"id": "emb", "kind": "llama-server-embeddings",
                                                                "url": tool_template_server.base_url}],
                                                 "activeEmbeddingProvider": "emb"}), runtime=None)
    vectors = await reg.embed(["hello world", "hello there world", "goodbye"])
    await reg.close()
    assert len(vectors) == 3 and len({len(v) for v in vectors}) == 1 and len(vectors[0]) > 100
    assert cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2])


@pytest.mark.llama_server
async def test_openai_embeddings_endpoint_through_the_openai_compatible_kind(tool_template_server):
    from atomic_agent.plugins.openai_compatible import provider_factory

    reg = EmbeddingRegistry({"openai-compatible": kind("openai-compatible", provider_factory.build_openai_provider)},
                            structure_llm_block({"providers": [{"id": "v1", "kind": "openai-compatible",
                                                                "preset": "llamacpp",
                                                                "baseUrl": tool_template_server.base_url + "/v1",
                                                                "model": "smollm2"}],
                                                 "activeEmbeddingProvider": "v1"}), runtime=None)
    vectors = await reg.embed(["hello world", "goodbye"])
    await reg.close()
    assert len(vectors) == 2 and abs(math.sqrt(sum(x * x for x in vectors[0])) - 1.0) < 1e-3


@pytest.mark.llama_server
async def test_a_chat_server_without_embeddings_is_unavailable_not_fatal(llama_server):
    provider = LlamaEmbeddingProvider(llama_server.base_url)
    try:
        with pytest.raises(EmbeddingUnavailable) as info:
            await provider.embed(["x"])
    finally:
        await provider.close()
    assert info.value.status == 501 and "--embeddings" in str(info.value)
