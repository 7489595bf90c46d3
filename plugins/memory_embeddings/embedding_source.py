"""Where vectors come from: `llm.activeEmbeddingProvider` (any provider kind that embeds,
e.g. an OpenAI-compatible `/v1/embeddings`), else the managed embedding daemon the
llama_server plugin offers as the `llama_embeddings` service.

`model` names what produced the vectors (provider id and model), so vectors of another
model are never mixed into one index: a change of model means re-embedding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import EmbeddingUnavailable, llm_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

MANAGED_SERVICE = "llama_embeddings"


@attrs.frozen
class EmbeddingSource:
    model: str
    provider: Any = attrs.field(eq=False, repr=False)
    # a provider registry built only for this source (the runtime's text provider is fixed)
    owned_registry: Any = attrs.field(default=None, eq=False, repr=False)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self.provider.embed(list(texts))

    async def close(self) -> None:
        if self.owned_registry is not None:
            await self.owned_registry.close()


def resolve_embedding_source(runtime: RuntimeView) -> EmbeddingSource | None:
    """The configured source, or None when there is none (no hybrid recall then)."""
    llm = llm_config.read_llm_config(runtime.config)
    if llm.active_embedding_provider:
        entry = llm.entry(llm.active_embedding_provider) or {}
        model = str(entry.get("embeddingModel") or entry.get("model") or "")
        registry = getattr(runtime.provider, "registry", None)
        owned = None
        if registry is None:  # the runtime was given a fixed text provider: build the entry here
            registry = owned = runtime.build_provider_registry()
        try:
            provider = registry.get(llm.active_embedding_provider)
        except ValueError as exc:
            raise EmbeddingUnavailable(f"embedding provider {llm.active_embedding_provider!r}: {exc}") from exc
        if not callable(getattr(provider, "embed", None)):
            raise EmbeddingUnavailable(f"provider {llm.active_embedding_provider!r} cannot embed text")
        return EmbeddingSource(f"{llm.active_embedding_provider}/{model}", provider, owned)
    try:
        managed = runtime.service(MANAGED_SERVICE)
    except KeyError:
        return None
    if managed is None:
        return None
    return EmbeddingSource(f"llama/{getattr(managed, 'model_id', '') or 'embeddings'}", managed)
