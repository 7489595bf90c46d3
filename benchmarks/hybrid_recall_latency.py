"""Hybrid recall latency at 1k / 10k / 100k notes with embeddings (memory_embeddings plugin).

Per corpus size: notes in memory.sqlite (FTS5) and 384-d unit vectors in the sqlite-vec
index (the plugin's VectorIndex, one partition), then N queries through the same path
`### recalled` takes: nearest vectors (k = candidates) and NoteStore.recall with `nearest`.
Printed: p50/p95 of the vector search, of the fused recall and of both together.

The notes are benchmarks/memory_recall.py's synthetic corpus (the BM25 baseline's). The vectors are synthetic (random unit vectors; a query is a note's vector plus noise):
embedding 100k real notes takes hours on 2 shared cores, and the search cost does not depend
on what the vectors mean. `--with-daemon` also times the query embedding on a real embedding
llama-server (all-MiniLM-L6-v2), the part that does depend on the model.

Usage: .venv/bin/python benchmarks/hybrid_recall_latency.py [--sizes 1000,10000,100000] [--queries 200]
       [--with-daemon]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.recall_fusion import FusionWeights
from atomic_agent.plugins.memory_embeddings.vector_index import GLOBAL_PARTITION, VectorIndex

sys.path.insert(0, str(Path(__file__).parent))
from memory_recall import make_notes, vocabulary, zipf_weights  # noqa: E402  (the same corpus as BM25's benchmark)

DIM = 384
CANDIDATES = 50


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def measure(n: int, queries: int, tmp: Path, rng: np.random.Generator) -> dict[str, float]:
    import random

    words = random.Random(n)
    vocab = vocabulary(words)
    database = MemoryDatabase.open(tmp / f"memory-{n}.sqlite")
    store = NoteStore(database, max_entries=n + 1)
    started = time.perf_counter()
    ids, _ = store.store_many(make_notes(words, vocab, zipf_weights(len(vocab)), n))
    notes_s = time.perf_counter() - started
    vectors = unit(rng.normal(size=(n, DIM)))
    index = VectorIndex.open(tmp / f"vectors-{n}.sqlite")
    index.reset("synthetic", DIM)
    started = time.perf_counter()
    for start in range(0, n, 5000):
        chunk = zip(ids[start:start + 5000], vectors[start:start + 5000], strict=True)
        index.upsert([(i, GLOBAL_PARTITION, v) for i, v in chunk])
    vectors_s = time.perf_counter() - started
    knn_ms, fused_ms, total_ms, bm25_ms = [], [], [], []
    weights = FusionWeights(0.6, 0.4)
    for _ in range(queries):
        target = int(rng.integers(n))
        query_vector = unit(vectors[target:target + 1] + 0.5 * rng.normal(size=(1, DIM)) / np.sqrt(DIM))[0]
        question = " ".join(words.choices(vocab[50:3000], k=words.randint(2, 6)))  # as memory_recall.py asks
        tb = time.perf_counter()
        store.recall(question, 3)
        bm25_ms.append((time.perf_counter() - tb) * 1000)
        t0 = time.perf_counter()
        nearest = index.nearest(query_vector, CANDIDATES, [GLOBAL_PARTITION])
        t1 = time.perf_counter()
        store.recall(question, 3, nearest=nearest, fusion=weights, candidates=CANDIDATES)
        t2 = time.perf_counter()
        knn_ms.append((t1 - t0) * 1000)
        fused_ms.append((t2 - t1) * 1000)
        total_ms.append((t2 - t0) * 1000)
    index.close()
    database.close()
    return {"knn_p50": statistics.median(knn_ms), "knn_p95": pct(knn_ms, 0.95),
            "fused_p50": statistics.median(fused_ms), "fused_p95": pct(fused_ms, 0.95),
            "total_p50": statistics.median(total_ms), "total_p95": pct(total_ms, 0.95),
            "notes_s": notes_s, "vectors_s": vectors_s, "bm25_p50": statistics.median(bm25_ms)}


def daemon_query_ms(queries: int) -> list[float]:
    sys.path.insert(0, str(Path(__file__).parent))
    from locomo_hybrid import EmbeddingDaemon

    daemon = EmbeddingDaemon(None)
    try:
        daemon.embed(["warm up"])
        timings = []
        for q in range(queries):
            started = time.perf_counter()
            daemon._cache.clear()
            daemon.embed([f"when is the quarterly report due, question {q}?"])
            timings.append((time.perf_counter() - started) * 1000)
        return timings
    finally:
        daemon.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--with-daemon", action="store_true")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    print(f"hybrid recall latency, {DIM}-d vectors, k={CANDIDATES} candidates, {args.queries} queries (ms)")
    print(f"{'notes':>8} {'knn p50':>8} {'knn p95':>8} {'fused p50':>10} {'fused p95':>10} {'total p50':>10} "
          f"{'total p95':>10} {'bm25 only p50':>14} {'insert s':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            r = measure(size, args.queries, Path(tmp), rng)
            print(f"{size:>8} {r['knn_p50']:>8.2f} {r['knn_p95']:>8.2f} {r['fused_p50']:>10.2f} {r['fused_p95']:>10.2f} "
                  f"{r['total_p50']:>10.2f} {r['total_p95']:>10.2f} {r['bm25_p50']:>14.2f} "
                  f"{r['notes_s'] + r['vectors_s']:>9.1f}")
    if args.with_daemon:
        timings = daemon_query_ms(min(args.queries, 100))
        print(f"query embedding on the embedding daemon: p50 {statistics.median(timings):.2f} ms, "
              f"p95 {pct(timings, 0.95):.2f} ms")


if __name__ == "__main__":
    main()
