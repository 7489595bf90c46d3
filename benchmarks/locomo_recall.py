"""Retrieval quality of the notes store on the LoCoMo development split, for any
combination of memory phases (no LLM involved).

Every turn of a conversation is stored as a note through NoteStore (one memory.sqlite per
conversation, as one user's memory would be); each question of categories 1-4 is
answered through the product's recall path - NoteStore.recall, then the phases that are
switched on - and the ranked notes are mapped back to their turn ids. Printed per
category and overall: Recall@5/@10/@50 over the evidence turns, any@10, all@10, NDCG@10
(binary), MRR, and the recall latency.

Phases (`--phases`, comma-separated; default `prev`, the figures the issue starts from):
  prev     the previous turn is the note's context key (indexed, weight --context-weight)
  next     the next turn joins the context key (reflection notes keep the whole exchange)
  dates    the session date, written as reflection's note_context writes it ("written
           Monday 8 May 2023"), joins the context key
  speaker  notes carry meta.speaker; the notes phase's speaker rerank runs on the hits
  links    the link graph: each turn links to the one before it in its session (a
           structural stand-in for the LLM link generator) and LinkStore.expand folds the
           linked notes in after the top-10 base hits, as the notes phase does
  feedback pseudo-relevance feedback (NoteStore.recall's QueryFeedback, what
           memoryNotes.recallInjection.feedbackTerms switches on): the best hits' shared
           words join a second full-text query, fused with the first ranking
  rewrite  counts how many questions the rewriter's heuristic gate would send to the
           LLM (no rewrite is applied: that needs a model)
`--ablation` prints one summary row per phase added in the order given, then the table.

`--hybrid` adds the memory_embeddings plugin's vector side (benchmarks/locomo_hybrid.py):
a private embedding llama-server (all-MiniLM-L6-v2) unless --embedding-url names one.

`--defaults` runs exactly what a fresh install ships (read from the config blocks' defaults).

Usage: .venv/bin/python benchmarks/locomo_recall.py [--data PATH] [--defaults | --phases prev,next,...]
       [--context-weight W] [--ablation]
       [--hybrid [--embedding-url URL] [--fts5-weight A --vector-weight B] [--candidates N]
                 [--vector-context] [--vector-cache FILE]]
With --vector-cache, a later run whose texts are all cached needs no daemon: pass any
unreachable --embedding-url (e.g. http://127.0.0.1:9) and nothing is started.
The data (CC BY-NC 4.0) stays outside the repository: ../shared/data/locomo/locomo-dev.json.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import re
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import DEFAULT_WEIGHTS, NoteInput, NoteStore
from atomic_agent.plugins.memory.query_feedback import QueryFeedback
from atomic_agent.plugins.memory_notes.speaker_rerank import speaker_rerank
from atomic_agent.plugins.memory_reflection.note_context import exchange_context
from atomic_agent.plugins.memory_rewriter.referential_gate import is_referential

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
PHASES = ("prev", "next", "dates", "speaker", "feedback", "links", "rewrite")
DIA_ID = re.compile(r"D\d+:\d+")
SESSION_DATE = re.compile(r"(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})", re.IGNORECASE)
K_MAX = 50
BASE_FOR_LINKS = 10  # base hits the link graph expands (the rest of the ranking follows the expansion)
MAX_EXPANDED = 12
METRICS = ["R@5", "R@10", "R@50", "any@10", "all@10", "NDCG@10", "MRR"]


def turn_text(turn: dict[str, Any]) -> str:
    text = f"{turn['speaker']}: {turn.get('text', '')}"
    if turn.get("blip_caption"):
        text += f" [shares image: {turn['blip_caption']}]"
    return text


def session_epoch_ms(raw: str) -> int | None:
    """`1:56 pm on 8 May, 2023` -> epoch ms (UTC), or None when the string is not a date."""
    found = SESSION_DATE.search(raw or "")
    if found is None:
        return None
    hour, minute, half, day, month, year = found.groups()
    try:
        stamp = dt.datetime.strptime(f"{day} {month} {year} {int(hour) % 12 + (12 if half.lower() == 'pm' else 0)}:"
                                     f"{minute}", "%d %B %Y %H:%M").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return None
    return int(stamp.timestamp() * 1000)


def conversation_turns(conversation: dict[str, Any]) -> list[tuple[int, dict[str, Any], str]]:
    """(session number, turn, session date string) in session order."""
    sessions = sorted((int(k.split("_")[1]), v) for k, v in conversation.items()
                      if re.fullmatch(r"session_\d+", k) and isinstance(v, list))
    return [(number, turn, conversation.get(f"session_{number}_date_time", ""))
            for number, turns in sessions for turn in turns]


def conversation_notes(conversation: dict[str, Any], phases: set[str]) -> list[NoteInput]:
    turns = conversation_turns(conversation)
    texts = [turn_text(t) for _n, t, _d in turns]
    notes: list[NoteInput] = []
    for i, (_number, turn, date) in enumerate(turns):
        before = texts[i - 1] if "prev" in phases and i > 0 else ""
        after = texts[i + 1] if "next" in phases and i + 1 < len(texts) else ""
        stamp = session_epoch_ms(date) if "dates" in phases else None
        meta = {"diaId": turn["dia_id"], "date": date}
        if "speaker" in phases:
            meta["speaker"] = turn["speaker"]
        notes.append(NoteInput(texts[i], context=exchange_context(before, after, stamp), source="benchmark",
                               meta=meta))
    return notes


def link_sessions(links: LinkStore, ids: list[int], conversation: dict[str, Any]) -> None:
    turns = conversation_turns(conversation)
    for i in range(1, len(ids)):
        if turns[i][0] == turns[i - 1][0]:
            links.add(ids[i], ids[i - 1], "REFERENCES", source="benchmark", now=0)


def recall_ranked(store: NoteStore, links: LinkStore | None, question: str, phases: set[str],
                  hybrid: Any = None) -> list[Any]:
    """The notes for `question` in rank order, through the product's recall path."""
    feedback = QueryFeedback() if "feedback" in phases else None
    hits = (store.recall(question, K_MAX, feedback=feedback) if hybrid is None
            else hybrid.recall(store, question, K_MAX, feedback=feedback))
    if "speaker" in phases:
        hits = speaker_rerank(hits, question)
    notes = [h.note for h in hits]
    if links is not None:
        base = notes[:BASE_FOR_LINKS]
        shown = {n.id for n in base}
        linked = [n for n in (store.get(i) for i in links.expand([n.id for n in base], max_expanded=MAX_EXPANDED)
                              if i not in shown) if n is not None]
        shown |= {n.id for n in linked}
        notes = [*base, *linked, *(n for n in notes[BASE_FOR_LINKS:] if n.id not in shown)]
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


def evaluate(samples: list[dict[str, Any]], phases: set[str], weights: tuple[float, float, float],
             hybrid: Any = None) -> tuple[dict[str, list[dict[str, float]]], list[float], dict[str, int]]:
    per_cat: dict[str, list[dict[str, float]]] = defaultdict(list)
    latencies: list[float] = []
    counts = {"skipped": 0, "gated": 0, "questions": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            database = MemoryDatabase.open(Path(tmp) / f"{sample['sample_id']}.sqlite")
            store = NoteStore(database, max_entries=100_000, weights=weights)
            notes_in = conversation_notes(sample["conversation"], phases)
            ids, _ = store.store_many(notes_in, now=0)
            if hybrid is not None:  # the vector key is the turn alone (its neighbours stay BM25 keys),
                # or with --vector-context the turn and its context key, as memoryEmbeddings.embedContext
                hybrid.index_notes(Path(tmp) / f"{sample['sample_id']}.vectors.sqlite", store,
                                   {i: hybrid.vector_text(n.content, n.context)
                                    for i, n in zip(ids, notes_in, strict=False)})  # store_many omits evicted notes
            links = None
            if "links" in phases:
                links = LinkStore(database)
                link_sessions(links, ids, sample["conversation"])
            for qa in sample["qa"]:
                category = qa.get("category")
                if category not in CATEGORIES:
                    continue
                gold = {m for ev in qa.get("evidence", []) for m in DIA_ID.findall(str(ev))}
                if not gold:
                    counts["skipped"] += 1
                    continue
                question = str(qa["question"])
                counts["questions"] += 1
                if "rewrite" in phases and is_referential(question):
                    counts["gated"] += 1
                started = time.perf_counter()
                notes = recall_ranked(store, links, question, phases, hybrid)
                latencies.append((time.perf_counter() - started) * 1000)
                ranked = list(dict.fromkeys(n.meta["diaId"] for n in notes if n.meta))
                result = score(ranked, gold)
                per_cat[CATEGORIES[category]].append(result)
                per_cat["overall"].append(result)
            database.close()
            if hybrid is not None:
                hybrid.close()
    return per_cat, latencies, counts


def means(rows: list[dict[str, float]]) -> list[float]:
    return [statistics.fmean(r[m] for r in rows) for m in METRICS]


def print_table(per_cat: dict[str, list[dict[str, float]]]) -> None:
    print(f"{'category':<12} {'n':>5} " + " ".join(f"{m:>8}" for m in METRICS))
    for name in [*CATEGORIES.values(), "overall"]:
        rows = per_cat.get(name, [])
        if rows:
            print(f"{name:<12} {len(rows):>5} " + " ".join(f"{v:>8.3f}" for v in means(rows)))


def summary_row(label: str, per_cat: dict[str, list[dict[str, float]]]) -> str:
    overall = dict(zip(METRICS, means(per_cat["overall"]), strict=True))
    cats = " ".join(f"{name[:6]} {statistics.fmean(r['R@10'] for r in per_cat[name]):.3f}"
                    for name in CATEGORIES.values() if per_cat.get(name))
    return (f"{label:<34} R@10 {overall['R@10']:.3f} R@50 {overall['R@50']:.3f} NDCG@10 {overall['NDCG@10']:.3f} "
            f"MRR {overall['MRR']:.3f} | R@10 {cats}")


def parse_phases(raw: str) -> list[str]:
    phases = [p.strip() for p in raw.split(",") if p.strip()]
    unknown = [p for p in phases if p not in PHASES]
    if unknown:
        raise SystemExit(f"unknown phase(s) {', '.join(unknown)}; choose from {', '.join(PHASES)}")
    return phases


def shipped_configuration() -> tuple[list[str], bool]:
    """(phases, hybrid) a fresh install runs, read from the config blocks' own defaults, so
    `--defaults` follows the product: reflection notes keep the exchange around them and the
    day they were written (prev, next, dates); the notes phase always reranks by speaker;
    links and pseudo-relevance feedback when their blocks say so; hybrid when embeddings are on."""
    from atomic_agent.plugins.memory_embeddings.embeddings_config import EmbeddingsConfig
    from atomic_agent.plugins.memory_links.links_config import LinksConfig
    from atomic_agent.plugins.memory_notes.notes_config import NotesConfig
    from atomic_agent.plugins.memory_reflection.reflection_config import ReflectionConfig

    phases = ["prev", "next", "dates"] if ReflectionConfig().enabled else ["prev"]
    phases.append("speaker")
    if NotesConfig().recall_injection.feedback_terms:
        phases.append("feedback")
    if LinksConfig().enabled:
        phases.append("links")
    return phases, bool(EmbeddingsConfig().enabled)


def shipped_vector_context() -> bool:
    from atomic_agent.plugins.memory_embeddings.embeddings_config import EmbeddingsConfig

    return bool(EmbeddingsConfig().embed_context)


def run(data: Path, phases: list[str], weights: tuple[float, float, float], ablation: bool,
        hybrid: Any = None) -> None:
    samples = json.loads(data.read_text(encoding="utf-8"))
    print(f"LoCoMo dev ({data.name}), turn-level evidence retrieval, categories 1-4; bm25 weights "
          f"(content, tags, context)={weights}"
          + ("" if hybrid is None else f"; hybrid fts5/vector={hybrid.weights.lexical}/{hybrid.weights.vector}, "
             f"candidates={hybrid.candidates}"))
    steps: Iterable[list[str]] = [phases[:i] for i in range(len(phases) + 1)] if ablation else [phases]
    per_cat: dict[str, list[dict[str, float]]] = {}
    latencies: list[float] = []
    counts: dict[str, int] = {}
    for step in steps:
        per_cat, latencies, counts = evaluate(samples, set(step), weights, hybrid)
        if ablation:
            print(summary_row("+".join(step) or "(no phase)", per_cat))
    print(f"phases: {','.join(phases) or '(none)'}")
    print_table(per_cat)
    ordered = sorted(latencies)
    print(f"skipped (no valid evidence id): {counts['skipped']}; recall latency p50 "
          f"{statistics.median(ordered):.2f} ms, p95 {ordered[int(0.95 * len(ordered))]:.2f} ms")
    if "rewrite" in phases:
        print(f"rewriter gate: {counts['gated']} of {counts['questions']} questions are referential "
              "(each would cost one rewrite call; none is made here)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--phases", default="prev", help=f"comma-separated, from: {', '.join(PHASES)}")
    parser.add_argument("--context-weight", type=float, default=DEFAULT_WEIGHTS[2])
    parser.add_argument("--ablation", action="store_true", help="One summary row per phase added, in order.")
    parser.add_argument("--hybrid", action="store_true", help="Blend in embedding recall (memory_embeddings).")
    parser.add_argument("--embedding-url", default=None, help="An embedding llama-server to use instead of starting one.")
    parser.add_argument("--fts5-weight", type=float, default=0.6)  # memoryEmbeddings' defaults
    parser.add_argument("--vector-weight", type=float, default=0.4)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--vector-context", action="store_true",
                        help="Embed each turn with its context key (previous/next turn, date), not the turn alone.")
    parser.add_argument("--vector-cache", type=Path, default=None, help="JSON file caching vectors between runs.")
    parser.add_argument("--defaults", action="store_true",
                        help="Exactly the shipped configuration (overrides --phases and --hybrid).")
    args = parser.parse_args()
    phases = parse_phases(args.phases)
    if args.defaults:
        phases, args.hybrid = shipped_configuration()
        args.vector_context = shipped_vector_context()
        print(f"shipped defaults: phases {','.join(phases)}; hybrid {'on' if args.hybrid else 'off'}")
    bm25 = (DEFAULT_WEIGHTS[0], DEFAULT_WEIGHTS[1], args.context_weight)
    if not args.hybrid:
        run(args.data, phases, bm25, args.ablation)
        return
    from locomo_hybrid import EmbeddingDaemon, FusionWeights, HybridSide

    daemon = EmbeddingDaemon(args.embedding_url)
    daemon.load_cache(args.vector_cache)
    try:
        side = HybridSide(daemon, FusionWeights(args.fts5_weight, args.vector_weight), args.candidates,
                          args.vector_context)
        run(args.data, phases, bm25, args.ablation, side)
        ordered = sorted(side.query_ms)
        print(f"hybrid query (embed + knn + fused recall) p50 {statistics.median(ordered):.2f} ms")
    finally:
        daemon.save_cache(args.vector_cache)
        daemon.close()


if __name__ == "__main__":
    main()
