"""Retrieval quality of the notes store on the LoCoMo development split (no LLM involved).

Every turn of a conversation is stored as a note through NoteStore (one memory.sqlite per
conversation, as one user's memory would be); each question of categories 1-4 is
answered by NoteStore.recall - the same query building `### recalled` uses - and the
ranked notes are mapped back to their turn ids. Printed per category and overall:
Recall@5/@10/@50 over the evidence turns, any@10, all@10, NDCG@10 (binary), MRR, and the
recall latency.

Usage: .venv/bin/python benchmarks/locomo_recall.py [--data PATH] [--no-context] [--context-weight W]
       [--hybrid [--embedding-url URL] [--fts5-weight A --vector-weight B] [--candidates N]]
--hybrid adds the memory_embeddings plugin's vector side (benchmarks/locomo_hybrid.py): a
private embedding llama-server (all-MiniLM-L6-v2) unless --embedding-url names one.
The data (CC BY-NC 4.0) stays outside the repository: ../shared/data/locomo/locomo-dev.json.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import DEFAULT_WEIGHTS, NoteInput, NoteStore

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DIA_ID = re.compile(r"D\d+:\d+")
K_MAX = 50


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [shares image: {turn['blip_caption']}]"
    return text


def conversation_notes(conversation: dict[str, Any], with_context: bool) -> list[NoteInput]:
    """Turns in session order; with_context indexes the previous turn as the note's context."""
    sessions = sorted((int(k.split("_")[1]), v) for k, v in conversation.items()
                      if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
    notes: list[NoteInput] = []
    previous = ""
    for number, turns in sessions:
        date = conversation.get(f"session_{number}_date_time", "")
        for turn in turns:
            text = turn_text(turn)
            notes.append(NoteInput(text, context=previous if with_context else "", source="benchmark",
                                   meta={"diaId": turn["dia_id"], "speaker": turn["speaker"], "date": date}))
            previous = text
    return notes


def score(ranked: list[str], gold: set[str]) -> dict[str, float]:
    def recall_at(k: int) -> float:
        return len(gold & set(ranked[:k])) / len(gold)

    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in gold)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(gold), 10)))
    first = next((i for i, d in enumerate(ranked) if d in gold), None)
    return {"R@5": recall_at(5), "R@10": recall_at(10), "R@50": recall_at(50),
            "any@10": float(bool(gold & set(ranked[:10]))), "all@10": float(gold <= set(ranked[:10])),
            "NDCG@10": dcg / ideal if ideal else 0.0, "MRR": 1 / (first + 1) if first is not None else 0.0}


def run(data: Path, with_context: bool, weights: tuple[float, float, float], hybrid: Any = None) -> None:
    samples = json.loads(data.read_text(encoding="utf-8"))
    per_cat: dict[str, list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    skipped = 0
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            database = MemoryDatabase.open(Path(tmp) / f"{sample['sample_id']}.sqlite")
            store = NoteStore(database, max_entries=100_000, weights=weights)
            notes = conversation_notes(sample["conversation"], with_context)
            ids, _evicted = store.store_many(notes)
            if hybrid is not None:  # the vector key is the turn alone; its neighbour stays a BM25 key
                hybrid.index_notes(Path(tmp) / f"{sample['sample_id']}.vectors.sqlite", store,
                                   {i: n.content for i, n in zip(ids, notes)})
            for qa in sample["qa"]:
                category = qa.get("category")
                if category not in CATEGORIES:
                    continue
                gold = {m for ev in qa.get("evidence", []) for m in DIA_ID.findall(str(ev))}
                if not gold:
                    skipped += 1
                    continue
                started = time.perf_counter()
                hits = (store.recall(str(qa["question"]), K_MAX) if hybrid is None
                        else hybrid.recall(store, str(qa["question"]), K_MAX))
                latencies.append((time.perf_counter() - started) * 1000)
                ranked = list(dict.fromkeys(h.note.meta["diaId"] for h in hits if h.note.meta))
                result = score(ranked, gold)
                per_cat[CATEGORIES[category]].append(result)
                per_cat["overall"].append(result)
            database.close()
            if hybrid is not None:
                hybrid.close()
    metrics = ["R@5", "R@10", "R@50", "any@10", "all@10", "NDCG@10", "MRR"]
    print(f"LoCoMo dev ({data.name}), turn-level evidence retrieval, categories 1-4; "
          f"context={'previous turn' if with_context else 'none'}, bm25 weights={weights}"
          + ("" if hybrid is None else f", hybrid fts5/vector={hybrid.weights.lexical}/{hybrid.weights.vector}, "
             f"candidates={hybrid.candidates}"))
    print(f"{'category':<12} {'n':>5} " + " ".join(f"{m:>8}" for m in metrics))
    for name in [*CATEGORIES.values(), "overall"]:
        rows = per_cat.get(name, [])
        if rows:
            means = [statistics.fmean(r[m] for r in rows) for m in metrics]
            print(f"{name:<12} {len(rows):>5} " + " ".join(f"{v:>8.3f}" for v in means))
    ordered = sorted(latencies)
    print(f"skipped (no valid evidence id): {skipped}; recall latency p50 {statistics.median(ordered):.2f} ms, "
          f"p95 {ordered[int(0.95 * len(ordered))]:.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-context", action="store_true", help="Index each turn alone (the plain baseline).")
    parser.add_argument("--context-weight", type=float, default=DEFAULT_WEIGHTS[2])
    parser.add_argument("--hybrid", action="store_true", help="Blend in embedding recall (memory_embeddings).")
    parser.add_argument("--embedding-url", default=None, help="An embedding llama-server to use instead of starting one.")
    parser.add_argument("--fts5-weight", type=float, default=0.6)  # memoryEmbeddings' defaults
    parser.add_argument("--vector-weight", type=float, default=0.4)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--vector-cache", type=Path, default=None, help="JSON file caching vectors between runs.")
    args = parser.parse_args()
    bm25 = (DEFAULT_WEIGHTS[0], DEFAULT_WEIGHTS[1], args.context_weight)
    if not args.hybrid:
        run(args.data, not args.no_context, bm25)
        return
    from locomo_hybrid import EmbeddingDaemon, FusionWeights, HybridSide

    daemon = EmbeddingDaemon(args.embedding_url)
    daemon.load_cache(args.vector_cache)
    try:
        side = HybridSide(daemon, FusionWeights(args.fts5_weight, args.vector_weight), args.candidates)
        run(args.data, not args.no_context, bm25, side)
        ordered = sorted(side.query_ms)
        print(f"hybrid query (embed + knn + fused recall) p50 {statistics.median(ordered):.2f} ms")
    finally:
        daemon.save_cache(args.vector_cache)
        daemon.close()


if __name__ == "__main__":
    main()
