"""The openai-compatible kind's /v1/embeddings against a real llama-server."""

from __future__ import annotations

import math

import pytest

from atomic_agent.plugins.openai_compatible.provider_factory import build_openai_provider


@pytest.mark.llama_server
async def test_openai_embeddings_endpoint_answers_unit_vectors(tool_template_server) -> None:
    provider = build_openai_provider({"id": "v1", "kind": "openai-compatible", "preset": "llamacpp",
                                      "baseUrl": tool_template_server.base_url + "/v1", "model": "smollm2"}, None)
    try:
        vectors = await provider.embed(["hello world", "goodbye"])
    finally:
        await provider.close()
    assert len(vectors) == 2 and abs(math.sqrt(sum(x * x for x in vectors[0])) - 1.0) < 1e-3
