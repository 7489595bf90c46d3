"""The vector side of benchmarks/locomo_recall.py --hybrid: the same hybrid recall the
memory_embeddings plugin runs (sqlite-vec index, NoteStore.recall with `nearest`), with
vectors from a real embedding llama-server (all-MiniLM-L6-v2 from the model cache).

Vectors are cached per text in a .npy beside the temp dir (--vector-cache) so sweeping the
fusion weights does not re-embed. Started daemons are stopped on exit.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from atomic_agent.api import resolve_cache_dir
from atomic_agent.plugins.llama_server.llama_config import LlamaConfig
from atomic_agent.plugins.llama_server.llama_embeddings import LlamaEmbeddingProvider
from atomic_agent.plugins.llama_server.server_launch import embedding_launch_spec, start_server
from atomic_agent.plugins.llama_server.server_process import ServerPaths, free_loopback_port, stop_recorded_server
from atomic_agent.plugins.memory.recall_fusion import FusionWeights
from atomic_agent.plugins.memory_embeddings.vector_codec import checked_unit_vector
from atomic_agent.plugins.memory_embeddings.vector_index import GLOBAL_PARTITION, VectorIndex

BATCH = 32
MAX_CHARS = 1200


class EmbeddingDaemon:
    """A private embedding llama-server for the benchmark (or an existing URL)."""

    def __init__(self, url: str | None, threads: int = 2) -> None:
        self._state = Path(tempfile.mkdtemp(prefix="locomo-embed-"))
        self._paths = ServerPaths.for_embeddings(self._state)
        if url is None:
            cfg = LlamaConfig()
            cfg = LlamaConfig(embeddings=type(cfg.embeddings)(enabled=True, port=free_loopback_port(),
                                                              threads=threads))
            spec = embedding_launch_spec(cfg, self._state, resolve_cache_dir(), on_line=print)
            url = start_server(spec, self._paths).base_url
            self.started = True
        else:
            self.started = False
        self.url = url
        self._loop = asyncio.new_event_loop()  # one loop for the client's whole life
        self.provider = LlamaEmbeddingProvider(url)
        self._cache: dict[str, list[float]] = {}

    def load_cache(self, path: Path | None) -> None:
        if path is not None and path.exists():
            self._cache = json.loads(path.read_text())

    def save_cache(self, path: Path | None) -> None:
        if path is not None:
            path.write_text(json.dumps(self._cache))

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        keys = [hashlib.sha1(t[:MAX_CHARS].encode()).hexdigest() for t in texts]
        missing = [(k, t[:MAX_CHARS]) for k, t in zip(keys, texts, strict=True) if k not in self._cache]
        for start in range(0, len(missing), BATCH):
            chunk = missing[start:start + BATCH]
            vectors = self._loop.run_until_complete(self.provider.embed([t for _k, t in chunk]))
            for (key, _t), vector in zip(chunk, vectors, strict=True):
                self._cache[key] = checked_unit_vector(vector, None)
        return [self._cache[k] for k in keys]

    def close(self) -> None:
        self._loop.run_until_complete(self.provider.close())
        self._loop.close()
        if self.started:
            stop_recorded_server(self._paths)


class HybridSide:
    """Index one conversation's turns, then answer questions through hybrid recall."""

    def __init__(self, daemon: EmbeddingDaemon, weights: FusionWeights, candidates: int,
                 with_context: bool = False) -> None:
        self.daemon = daemon
        self.weights = weights
        self.candidates = candidates
        self.with_context = with_context
        self.query_ms: list[float] = []

    def vector_text(self, content: str, context: str) -> str:
        return f"{content}\n{context}" if self.with_context and context else content

    def index_notes(self, index_path: Path, store: Any, texts_by_id: dict[int, str]) -> None:
        self.index = VectorIndex.open(index_path)
        ids = list(texts_by_id)
        vectors = self.daemon.embed([texts_by_id[i] for i in ids])
        self.index.reset("benchmark", len(vectors[0]))
        self.index.upsert([(i, GLOBAL_PARTITION, v) for i, v in zip(ids, vectors, strict=True)])

    def recall(self, store: Any, question: str, k: int, feedback: Any = None) -> list[Any]:
        started = time.perf_counter()
        query = self.daemon.embed([question])[0]
        nearest = self.index.nearest(query, self.candidates, None)
        hits = store.recall(question, k, nearest=nearest, fusion=self.weights, candidates=self.candidates,
                            feedback=feedback)
        self.query_ms.append((time.perf_counter() - started) * 1000)
        return hits

    def close(self) -> None:
        self.index.close()


def as_array(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float32)
