"""EmbeddingRegistry: `llm.activeEmbeddingProvider` built from the registered provider kinds.

An embedding provider is any built provider with `async embed(texts) -> list[list[float]]`
(openai-compatible's /v1/embeddings, llama-server's /embedding on a daemon started with
`--embeddings`). Every failure, from a missing entry to a bad answer, becomes
`EmbeddingUnavailable`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from atomic_agent.embeddings.embedding_errors import EmbeddingUnavailable
from atomic_agent.providers.llm_config import LlmConfig
from atomic_agent.records.provider_kind import ProviderKind


class EmbeddingRegistry:
    def __init__(self, kinds: Mapping[str, ProviderKind], llm: LlmConfig, runtime: Any) -> None:
        self.kinds = dict(kinds)
        self.llm = llm
        self.runtime = runtime
        self._active: str | None = llm.active_embedding_provider or None
        self._provider: Any = None

    @property
    def active_id(self) -> str | None:
        return self._active

    @property
    def configured(self) -> bool:
        return self._active is not None

    def _build(self) -> Any:
        if self._active is None:
            raise EmbeddingUnavailable("no embedding provider is configured; set llm.activeEmbeddingProvider "
                                       "to the id of an entry in llm.providers")
        entry = self.llm.entry(self._active)
        if entry is None:
            raise EmbeddingUnavailable(f"embedding provider {self._active!r} is not in llm.providers", self._active)
        kind = self.kinds.get(str(entry.get("kind")))
        if kind is None:
            raise EmbeddingUnavailable(f"embedding provider {self._active!r} has kind {entry.get('kind')!r}, which "
                                       f"no plugin registers (known: {', '.join(sorted(self.kinds)) or 'none'})",
                                       self._active)
        try:
            provider = kind.factory(entry, self.runtime)
        except Exception as exc:
            raise EmbeddingUnavailable(f"embedding provider {self._active!r} could not be set up: {exc}",
                                       self._active) from exc
        if not callable(getattr(provider, "embed", None)):
            raise EmbeddingUnavailable(f"provider {self._active!r} (kind {kind.name!r}) does not produce embeddings",
                                       self._active)
        return provider

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. Raises only EmbeddingUnavailable."""
        if not texts:
            return []
        if self._provider is None:
            self._provider = self._build()
        try:
            vectors = await self._provider.embed(list(texts))
        except EmbeddingUnavailable:
            raise
        except Exception as exc:
            status = getattr(exc, "status", None)
            raise EmbeddingUnavailable(f"embedding provider {self._active!r} failed: {exc}", self._active,
                                       status if isinstance(status, int) else None) from exc
        return _checked(vectors, len(texts), self._active)

    async def try_embed(self, texts: Sequence[str]) -> list[list[float]] | EmbeddingUnavailable:
        """`embed`, with the failure returned instead of raised (for degrade-gracefully callers)."""
        try:
            return await self.embed(texts)
        except EmbeddingUnavailable as exc:
            return exc

    async def set_active(self, provider_id: str | None) -> None:
        if provider_id is not None and self.llm.entry(provider_id) is None:
            raise ValueError(f"no provider with id {provider_id!r} is configured")
        old, self._provider, self._active = self._provider, None, provider_id
        if old is not None:
            await old.close()

    async def close(self) -> None:
        old, self._provider = self._provider, None
        if old is not None:
            await old.close()


def _checked(vectors: Any, expected: int, provider_id: str | None) -> list[list[float]]:
    if not isinstance(vectors, list) or len(vectors) != expected:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        raise EmbeddingUnavailable(f"embedding provider {provider_id!r} returned {got} vectors for {expected} texts",
                                   provider_id)
    out: list[list[float]] = []
    width = None
    for vector in vectors:
        if not isinstance(vector, list) or not vector or not all(isinstance(x, (int, float)) for x in vector):
            raise EmbeddingUnavailable(f"embedding provider {provider_id!r} returned a malformed vector", provider_id)
        if width is not None and len(vector) != width:
            raise EmbeddingUnavailable(f"embedding provider {provider_id!r} returned vectors of different sizes",
                                       provider_id)
        width = len(vector)
        out.append([float(x) for x in vector])
    return out


def build_embedding_registry(host: Any, runtime: Any) -> EmbeddingRegistry:
    from atomic_agent.providers.llm_config_reader import read_llm_config
    from atomic_agent.runtime.provider_selection import provider_kinds

    return EmbeddingRegistry(provider_kinds(host), read_llm_config(runtime.config), runtime)
