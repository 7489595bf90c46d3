"""POST {baseUrl}/embeddings for an openai-compatible entry; failures are EmbeddingUnavailable."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_agent.api import EmbeddingUnavailable

from .endpoint_entry import Endpoint


async def embed_texts(http: Any, endpoint: Endpoint, headers: Mapping[str, str], texts: list[str]) -> list[list[float]]:
    import httpx

    url = endpoint.url("embeddings")
    model = endpoint.embedding_model or endpoint.model
    pid = endpoint.provider_id
    try:
        response = await http.post(url, json={"model": model, "input": texts, "encoding_format": "float"},
                                   headers=dict(headers))
    except httpx.HTTPError as exc:
        raise EmbeddingUnavailable(f"cannot reach {url} for embeddings ({type(exc).__name__})", pid) from exc
    if response.status_code != 200:
        raise EmbeddingUnavailable(f"{url} answered HTTP {response.status_code}: {response.text[:200]}", pid,
                                   response.status_code)
    try:
        data = response.json()
    except ValueError:
        raise EmbeddingUnavailable(f"{url} answered invalid JSON", pid) from None
    rows = data.get("data") if isinstance(data, dict) else None
    if not isinstance(rows, list) or len(rows) != len(texts):
        raise EmbeddingUnavailable(f"{url} answered {len(rows) if isinstance(rows, list) else 'no'} vectors "
                                   f"for {len(texts)} texts", pid)
    ordered = sorted(rows, key=lambda r: r.get("index", 0) if isinstance(r, dict) else 0)
    vectors = [r.get("embedding") if isinstance(r, dict) else None for r in ordered]
    if not all(isinstance(v, list) and v for v in vectors):
        raise EmbeddingUnavailable(f"{url} answered entries without float vectors", pid)
    return [[float(x) for x in v] for v in vectors]  # type: ignore[union-attr]
