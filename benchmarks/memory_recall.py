"""Notes store speed: BM25 top-5 recall latency (p50, p99) over 1k, 10k and 100k notes,
and insert throughput (one note per transaction, as the tools store; and in batches).

Usage: .venv/bin/python benchmarks/memory_recall.py [--sizes 1000,10000,100000] [--queries 300]
       [--feedback TERMS]  (recall with pseudo-relevance feedback, as memoryNotes.recallInjection.feedbackTerms)
Target: recall p50 under 5 ms at 10k notes. Synthetic corpus: Zipf-distributed words from a
fixed 6,000-word vocabulary, 10-40 words per note, seeded (same numbers run to run).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from atomic_agent.plugins.memory.query_feedback import QueryFeedback

SYLLABLES = ["ka", "lo", "mi", "ten", "ra", "su", "vo", "ne", "pi", "dor", "an", "el", "gri", "fa", "tus", "bel",
             "ix", "om", "qua", "zen", "ry", "hal", "pe", "cro"]


def vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    words: set[str] = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def zipf_weights(n: int) -> list[float]:
    return [1.0 / (rank + 1) ** 1.05 for rank in range(n)]


def make_notes(rng: random.Random, vocab: list[str], weights: list[float], count: int) -> list[NoteInput]:
    return [NoteInput(" ".join(rng.choices(vocab, weights, k=rng.randint(10, 40))),
                      tags=[rng.choice(vocab[:200])]) for _ in range(count)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_size(size: int, queries: int, rng: random.Random, vocab: list[str], weights: list[float],
               workdir: Path, feedback: QueryFeedback | None = None) -> dict[str, float]:
    database = MemoryDatabase.open(workdir / f"bench-{size}.sqlite")
    store = NoteStore(database, max_entries=size + 10_000)
    notes = make_notes(rng, vocab, weights, size)
    started = time.perf_counter()
    for start in range(0, size, 1000):
        store.store_many(notes[start:start + 1000])
    batch_rate = size / (time.perf_counter() - started)
    single = min(2000, size)
    started = time.perf_counter()
    for item in notes[:single]:
        store.store(item.content, item.tags)
    single_rate = single / (time.perf_counter() - started)
    latencies: list[float] = []
    hits = 0
    for _ in range(queries):
        # 2-6 query words, drawn like user messages: mostly mid-frequency words
        query = " ".join(rng.choices(vocab[50:3000], k=rng.randint(2, 6)))
        t0 = time.perf_counter()
        found = store.recall(query, 5, feedback=feedback)
        latencies.append((time.perf_counter() - t0) * 1000)
        hits += bool(found)
    database.close()
    size_mb = (workdir / f"bench-{size}.sqlite").stat().st_size / 1e6
    return {"notes": size, "p50_ms": statistics.median(latencies), "p99_ms": percentile(latencies, 0.99),
            "mean_ms": statistics.fmean(latencies), "hit_rate": hits / queries, "insert_single_per_s": single_rate,
            "insert_batch_per_s": batch_rate, "file_mb": size_mb}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--feedback", type=int, default=0, metavar="TERMS", help="Pseudo-relevance feedback words.")
    args = parser.parse_args()
    feedback = QueryFeedback(terms=args.feedback) if args.feedback else None
    rng = random.Random(20261202)
    vocab = vocabulary(rng)
    weights = zipf_weights(len(vocab))
    print(f"{'notes':>8} {'p50 ms':>8} {'p99 ms':>8} {'mean ms':>8} {'hit':>5} {'store/s':>9} {'batch/s':>9} {'MB':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            r = bench_size(size, args.queries, rng, vocab, weights, Path(tmp), feedback)
            print(f"{r['notes']:>8} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['mean_ms']:>8.2f} {r['hit_rate']:>5.2f} "
                  f"{r['insert_single_per_s']:>9.0f} {r['insert_batch_per_s']:>9.0f} {r['file_mb']:>6.1f}")


if __name__ == "__main__":
    main()
