"""llama-server's native `/embedding` endpoint, for a second daemon started with `--embeddings`.

The answer nests each vector one level deeper than /v1/embeddings does
(`[{"index": 0, "embedding": [[...]]}]`); a server started without `--embeddings` says
501. Every failure is raised as EmbeddingUnavailable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from atomic_agent.api import EmbeddingUnavailable, ProviderCapabilities

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

DEFAULT_TIMEOUT_S = 60.0


class LlamaEmbeddingProvider:
    capabilities = ProviderCapabilities(transport="grammar", embeddings=True)
    mode = "external"

    def __init__(self, url: str, *, provider_id: str = "", timeout_s: float = DEFAULT_TIMEOUT_S,
                 transport: Any = None) -> None:
        import httpx

        from .llama_client import server_transport
        from .reclaiming_transport import ReclaimingTransport

        self.url = url.rstrip("/")
        self.provider_id = provider_id or None
        self.model_id = ""  # what the daemon serves, when its owner knows (names stored vectors)
        # an embedding call cut off by a cancel must not strand a pool slot (see reclaiming_transport)
        self._http = httpx.AsyncClient(base_url=self.url, timeout=httpx.Timeout(timeout_s),
                                       transport=ReclaimingTransport(transport or server_transport(self.url)))

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        import httpx

        try:
            response = await self._http.post("/embedding", json={"content": list(texts)})
        except httpx.HTTPError as exc:
            raise EmbeddingUnavailable(f"cannot reach the embedding llama-server at {self.url} "
                                       f"({type(exc).__name__})", self.provider_id) from exc
        if response.status_code != 200:
            hint = " (start it with --embeddings)" if response.status_code == 501 else ""
            raise EmbeddingUnavailable(f"llama-server at {self.url} answered HTTP {response.status_code} to "
                                       f"/embedding{hint}: {response.text[:200]}", self.provider_id,
                                       response.status_code)
        return parse_embedding_answer(response.json(), len(texts), self.url)

    async def close(self) -> None:
        await self._http.aclose()


def parse_embedding_answer(data: Any, expected: int, url: str = "") -> list[list[float]]:
    """Vectors in input order from `[{"index": i, "embedding": [[f, ...]]}, ...]`."""
    if not isinstance(data, list) or len(data) != expected:
        raise EmbeddingUnavailable(f"llama-server {url} /embedding answered {type(data).__name__} "
                                   f"instead of {expected} entries")
    rows: list[tuple[int, list[float]]] = []
    for position, item in enumerate(data):
        vector = item.get("embedding") if isinstance(item, dict) else None
        if isinstance(vector, list) and vector and isinstance(vector[0], list):
            vector = vector[0]  # one pooled vector per input, nested once
        if not isinstance(vector, list) or not vector:
            raise EmbeddingUnavailable(f"llama-server {url} /embedding answered an entry without a vector "
                                       "(is --pooling set to none?)")
        index = item.get("index", position)
        rows.append((index if isinstance(index, int) else position, [float(x) for x in vector]))
    return [vector for _, vector in sorted(rows, key=lambda r: r[0])]


def build_llama_embedding_provider(entry: dict[str, Any], runtime: RuntimeView) -> LlamaEmbeddingProvider:
    """Factory for a `llama-server-embeddings` entry: `url` of the `--embeddings` daemon."""
    url = entry.get("url") or entry.get("baseUrl")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ValueError("a llama-server-embeddings provider entry needs `url`, e.g. http://127.0.0.1:19092 "
                         "(a llama-server started with --embeddings --pooling mean)")
    timeout = entry.get("timeoutS", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ValueError(f"llama-server-embeddings entry `timeoutS` must be a positive number, got {timeout!r}")
    return LlamaEmbeddingProvider(url, provider_id=str(entry.get("id") or ""), timeout_s=float(timeout))
