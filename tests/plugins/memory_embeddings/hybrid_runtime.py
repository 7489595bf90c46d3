"""A runtime with the notes phase, hybrid recall and a stand-in embedding daemon."""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from tests.plugins.memory_embeddings.concept_embedder import ConceptEmbedder, embedder_plugin
from tests.plugins.memory_plugins.memory_runtime import write_config

PLUGINS = ("memory", "metrics", "memory_notes", "memory_embeddings")


def make_hybrid_runtime(state_dir: Path, provider: Any = None, embedder: ConceptEmbedder | None = None, *,
                        enabled: bool | None = True, plugins: Iterable[str] = PLUGINS,
                        config: Mapping[str, Any] | None = None) -> Runtime:
    host = fresh_plugin_host(environ={})
    for name in plugins:
        host.register(importlib.import_module(f"atomic_agent.plugins.{name}"), name)
    if embedder is not None:
        host.register(embedder_plugin(embedder), "test_embedder")
    blocks = dict(config or {})
    if enabled is not None:  # None: write no memoryEmbeddings block (a runtime without the plugin)
        blocks["memoryEmbeddings"] = {"enabled": enabled, **blocks.get("memoryEmbeddings", {})}
    write_config(state_dir, blocks)
    return Runtime(boot(state_dir, environ={}, host=host), provider=provider, environ={})


def counter(runtime: Runtime, name: str, **tags: Any) -> float:
    """The value of one counter in the metrics service (0 when never counted)."""
    metrics = runtime.service("metrics")
    total = 0.0
    for series in metrics.snapshot().get("counters", []):
        if series["name"] == name and all(series["tags"].get(k) == v for k, v in tags.items()):
            total += series["value"]
    return total
