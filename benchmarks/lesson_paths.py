"""Lesson paths' cost outside the model calls: reading a turn's trouble from a long session's
transcript (every turn does it, before reflection), the reranked `### lessons` recall, and one
cold-path curation (duplicate merge, decay, retirement sweeps) over a full live set.

Usage: .venv/bin/python benchmarks/lesson_paths.py [--rows 1000,10000,100000] [--lessons 200,2000]
Synthetic and seeded (same numbers run to run): sessions of tool call/result pairs, lessons
drawn from a 34-word vocabulary (every lesson shares words with most others: the worst case
for recall pools and for the duplicate merge's inverted index).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from atomic_agent.plugins.memory.lesson_store import LessonStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.turn_trouble import assess_turn
from atomic_agent.sessions.transcript_entry import TranscriptEntry

WORDS = ("deploy build test config port file path timeout network cache log server database backup "
         "staging prod branch commit grep shell docker image volume secret token retry slow fails missing").split()


def transcript(rows: int, rng: random.Random) -> list[TranscriptEntry]:
    out: list[TranscriptEntry] = []
    turn = 0
    while len(out) < rows:
        out.append(TranscriptEntry("user", turn, text=" ".join(rng.choices(WORDS, k=12))))
        for step in range(rng.randint(1, 6)):
            out.append(TranscriptEntry("assistant_tool_call", turn, tool="fs.read", args={"path": f"f{step}"},
                                       step=step, batch_index=0))
            status = "error" if rng.random() < 0.1 else "ok"
            out.append(TranscriptEntry("tool_result", turn, tool="fs.read", status=status, text="x" * 200, step=step,
                                       batch_index=0))
        out.append(TranscriptEntry("assistant_reply", turn, text="done", tool="reply"))
        out.append(TranscriptEntry("turn_finished", turn, reason="reply"))
        turn += 1
    return out


def ms(samples: list[float]) -> str:
    ordered = sorted(samples)
    return f"p50 {statistics.median(ordered):.2f} ms, p99 {ordered[int(len(ordered) * 0.99) - 1]:.2f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000,10000,100000")
    parser.add_argument("--lessons", default="200,2000")
    args = parser.parse_args()
    rng = random.Random(7)
    for rows in (int(x) for x in args.rows.split(",")):
        entries = transcript(rows, rng)
        last = entries[-1].turn_index
        samples = []
        for _ in range(30):
            started = time.perf_counter()
            assess_turn(entries, "s", last, correction="no, that's wrong")
            samples.append((time.perf_counter() - started) * 1000)
        print(f"assess_turn, session of {rows} rows ({last + 1} turns): {ms(samples)}")
    for count in (int(x) for x in args.lessons.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            db = MemoryDatabase.open(Path(tmp) / "memory.sqlite")
            store = LessonStore(db, max_entries=count)
            for i in range(count):
                store.create(" ".join(rng.sample(WORDS, 5)), " ".join(rng.sample(WORDS, 8)), evidence=[i + 1])
                if i % 3 == 0:
                    store.model_vote(i + 1, "s", i, up=rng.random() < 0.5)
            samples = []
            for _ in range(100):
                query = " ".join(rng.sample(WORDS, 6))
                started = time.perf_counter()
                store.recall(query, 3, score_blend=0.4)
                samples.append((time.perf_counter() - started) * 1000)
            print(f"reranked lesson recall (k=3, pool 9), {count} live lessons: {ms(samples)}")
            started = time.perf_counter()
            curation = store.curate()
            took = (time.perf_counter() - started) * 1000
            print(f"first curation over {count} live lessons (every pair sharing a trigger word): {took:.1f} ms "
                  f"({len(curation.merged)} merged, {len(curation.downvoted)} downvoted, {curation.decayed} decayed)")
            since = curation_stamp = int(time.time() * 1000)
            for i in range(10):
                store.create(" ".join(rng.sample(WORDS, 5)), " ".join(rng.sample(WORDS, 8)), now=curation_stamp + i + 1)
            started = time.perf_counter()
            store.curate(since=since, now=curation_stamp + 100)
            took = (time.perf_counter() - started) * 1000
            print(f"a later tick's curation (10 lessons new since the last): {took:.1f} ms")
            db.close()


if __name__ == "__main__":
    main()
