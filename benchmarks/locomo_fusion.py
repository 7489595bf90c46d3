"""Learned fusion on the LoCoMo development split, checked by cross-validation across
conversations: does a linear scorer over recall features, fitted on some conversations,
rank the held-out conversation's evidence better than the shipped (hand-set) ranking?

The candidates of a question are what the shipped keyword path returns (benchmarks/
locomo_recall.py --defaults: BM25 with the context key, speaker rerank, link expansion;
up to 50 + expanded). Features per candidate:
  shipped   1 / (1 + its rank in the shipped ranking)
  content   BM25 of the turn's own text (this column alone), / the query's best
  context   BM25 of the context key alone (neighbouring turns, session date), / the best
  speaker   1 when the question names the turn's speaker
  linked    1 when it joined through link expansion (the session neighbour of a top hit)
  adjacent  how many of the top-5 shipped hits sit within two turns of it in its session
  date      1 when the question names the month or year of the turn's session
(no cosine: the shipped defaults run the keyword path; embeddings are off by default.)

The model is w · features, fitted by coordinate ascent on mean R@10 + NDCG@10 of the
training conversations, starting from the shipped ranking (w = shipped only). Each of the
five conversations is held out once (leave-one-conversation-out); printed per fold and in
all: hand-set vs learned R@10 and NDCG@10 on the held-out conversation, the weights, and the
verdict: ship only if the learned ranking wins on mean R@10 by at least --margin AND in
every fold. Nothing is written; the verdict says whether weights would be worth shipping.

Measured (dev split, 5 folds, 3 passes, about 100 s on one core): held-out R@10 gain +0.003
on average (+0.008, -0.008, -0.020, +0.023, +0.014); in-sample 0.749 -> 0.769. Not confirmed
by cross-validation, so no learned weights ship; the hand-set ranking stays.

Usage: .venv/bin/python benchmarks/locomo_fusion.py [--data PATH] [--margin 0.01] [--passes 3]
       [--conversations N]  (N > 1: only the first N conversations, for a quick run)
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from locomo_recall import (
    CATEGORIES,
    DEFAULT_DATA,
    DIA_ID,
    K_MAX,
    conversation_notes,
    link_sessions,
    recall_ranked,
    score,
    shipped_configuration,
)

from atomic_agent.plugins.memory.fts_query import build_match_query
from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import DEFAULT_WEIGHTS, NoteStore

FEATURES = ("shipped", "content", "context", "speaker", "linked", "adjacent", "date")
GRID = (-1.0, -0.5, -0.25, -0.1, 0.0, 0.1, 0.25, 0.5, 1.0, 2.0)
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
WORDS = re.compile(r"\w+")


def column_scores(database: MemoryDatabase, match: str | None, ids: list[int]) -> dict[int, tuple[float, float]]:
    """{note id: (-bm25 of content alone, -bm25 of context alone)} for the candidates."""
    if match is None or not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    rows = database.query(f"SELECT rowid AS id, bm25(memories_fts, 1, 0, 0) AS c, bm25(memories_fts, 0, 0, 1) AS x "
                          f"FROM memories_fts WHERE memories_fts MATCH ? AND rowid IN ({marks})", [match, *ids])
    return {int(r["id"]): (-float(r["c"]), -float(r["x"])) for r in rows}


def turn_place(dia_id: str) -> tuple[int, int]:
    session, turn = dia_id[1:].split(":")
    return int(session), int(turn)


def question_rows(samples: list[dict[str, Any]], phases: set[str]) -> list[list[dict[str, Any]]]:
    """Per conversation, per question: its gold set and its candidates' features."""
    out: list[list[dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for sample in samples:
            database = MemoryDatabase.open(Path(tmp) / f"{sample['sample_id']}.sqlite")
            store = NoteStore(database, max_entries=100_000, weights=DEFAULT_WEIGHTS)
            ids, _ = store.store_many(conversation_notes(sample["conversation"], phases), now=0)
            links = LinkStore(database) if "links" in phases else None
            if links is not None:
                link_sessions(links, ids, sample["conversation"])
            rows: list[dict[str, Any]] = []
            for qa in sample["qa"]:
                if qa.get("category") not in CATEGORIES:
                    continue
                gold = {m for ev in qa.get("evidence", []) for m in DIA_ID.findall(str(ev))}
                if not gold:
                    continue
                question = str(qa["question"])
                notes = recall_ranked(store, links, question, phases)
                base_ids = {h.note.id for h in store.recall(question, K_MAX)}
                columns = column_scores(database, build_match_query(question), [n.id for n in notes])
                best_c = max((c for c, _x in columns.values()), default=0.0) or 1.0
                best_x = max((x for _c, x in columns.values()), default=0.0) or 1.0
                words = set(WORDS.findall(question.lower()))
                top = [turn_place(n.meta["diaId"]) for n in notes[:5] if n.meta]
                cands = []
                for rank, note in enumerate(notes):
                    meta = note.meta or {}
                    place = turn_place(meta["diaId"])
                    c, x = columns.get(note.id, (0.0, 0.0))
                    date = str(meta.get("date", "")).lower()
                    named = [m for m in MONTHS if m in date and m in words] + \
                        [y for y in re.findall(r"\d{4}", date) if y in words]
                    speaker = str(meta.get("speaker", "")).lower()
                    cands.append((meta["diaId"], (
                        1.0 / (1 + rank), c / best_c, x / best_x, float(bool(speaker) and speaker in words),
                        float(note.id not in base_ids),
                        float(sum(1 for s, t in top if s == place[0] and 0 < abs(t - place[1]) <= 2)),
                        float(bool(named)))))
                rows.append({"gold": gold, "cands": cands})
            out.append(rows)
            database.close()
    return out


def rank_with(weights: tuple[float, ...], cands: list[tuple[str, tuple[float, ...]]]) -> list[str]:
    scored = sorted(enumerate(cands), key=lambda ic: (-sum(w * f for w, f in zip(weights, ic[1][1], strict=True)),
                                                      ic[0]))
    return list(dict.fromkeys(dia for _i, (dia, _f) in scored))


def quality(weights: tuple[float, ...], rows: list[dict[str, Any]]) -> tuple[float, float]:
    results = [score(rank_with(weights, r["cands"]), r["gold"]) for r in rows]
    return statistics.fmean(x["R@10"] for x in results), statistics.fmean(x["NDCG@10"] for x in results)


def fit(rows: list[dict[str, Any]], passes: int) -> tuple[float, ...]:
    weights = [1.0] + [0.0] * (len(FEATURES) - 1)
    best = sum(quality(tuple(weights), rows))
    for _ in range(passes):
        moved = False
        for i in range(1, len(FEATURES)):
            for value in GRID:
                trial = list(weights)
                trial[i] = value
                got = sum(quality(tuple(trial), rows))
                if got > best + 1e-9:
                    best, weights, moved = got, trial, True
        if not moved:
            break
    return tuple(weights)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--margin", type=float, default=0.01, help="Mean held-out R@10 gain needed to ship.")
    parser.add_argument("--passes", type=int, default=3)
    parser.add_argument("--conversations", type=int, default=0)
    args = parser.parse_args()
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations > 1:
        samples = samples[: args.conversations]
    phases, _hybrid = shipped_configuration()
    started = time.perf_counter()
    per_conv = question_rows(samples, set(phases))
    print(f"LoCoMo dev ({args.data.name}): {len(samples)} conversations, {sum(map(len, per_conv))} questions; "
          f"shipped phases {','.join(phases)}; features built in {time.perf_counter() - started:.1f} s")
    hand = (1.0,) + (0.0,) * (len(FEATURES) - 1)
    gains: list[float] = []
    print(f"{'held out':<10} {'n':>4} {'hand R@10':>9} {'learned':>8} {'hand NDCG':>9} {'learned':>8}  weights "
          f"({', '.join(FEATURES)})")
    for held, sample in enumerate(samples):
        train = [r for i, rows in enumerate(per_conv) if i != held for r in rows]
        weights = fit(train, args.passes)
        h_r, h_n = quality(hand, per_conv[held])
        l_r, l_n = quality(weights, per_conv[held])
        gains.append(l_r - h_r)
        print(f"{sample['sample_id']:<10} {len(per_conv[held]):>4} {h_r:>9.3f} {l_r:>8.3f} {h_n:>9.3f} {l_n:>8.3f}  "
              + ", ".join(f"{w:g}" for w in weights))
    every = [r for rows in per_conv for r in rows]
    full = fit(every, args.passes)
    mean_gain = statistics.fmean(gains)
    print(f"held-out R@10 gain: mean {mean_gain:+.4f}, per fold " + " ".join(f"{g:+.3f}" for g in gains))
    h_r, h_n = quality(hand, every)
    f_r, f_n = quality(full, every)
    print(f"fitted on all (in-sample, optimistic): R@10 {h_r:.3f} -> {f_r:.3f}, NDCG@10 {h_n:.3f} -> {f_n:.3f}; "
          "weights " + ", ".join(f"{n}={w:g}" for n, w in zip(FEATURES, full, strict=True)))
    ship = mean_gain >= args.margin and all(g > 0 for g in gains)
    print(f"verdict: {'ship' if ship else 'do not ship'} (needs a mean held-out R@10 gain >= {args.margin} "
          "and a gain in every fold)")
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
