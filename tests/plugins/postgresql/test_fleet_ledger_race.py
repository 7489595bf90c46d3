"""Three processes (threads, each with its own store object and connection) on one
PostgreSQL admit messages into 12 shared sessions while all three run whatever turn is
startable: every session's turns run one at a time in admission order, and every message is
answered exactly once — the lane rule and the compare-and-set moves hold under real
contention, not just in a two-racer test."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

from atomic_agent.sessions.transcript_entry import REPLY, TURN_FINISHED, TranscriptEntry
from atomic_agent.turns.turn_states import StartedTurn
from tests.plugins.postgresql.pg_kit import backend_on

PROCESSES, SESSIONS, MESSAGES = 3, 12, 120


def test_interleaved_admissions_run_fifo_per_session_and_once_each_across_processes(postgresql_database: Any):
    backend = backend_on(postgresql_database, pool_size=12)
    setup = backend.open_store()
    sessions = [setup.create(Path("/w")).id for _ in range(SESSIONS)]
    admitted_all = threading.Event()
    errors: list[BaseException] = []
    admitted: list[tuple[int, str, str]] = []  # (admission order, session, text)
    lock = threading.Lock()

    def process(n: int) -> None:
        store = backend.open_store()
        ledger = backend.ledger(store, f"p{n}")
        rng = random.Random(n)
        try:
            for i in range(n, MESSAGES, PROCESSES):  # this process's share of the messages, interleaved
                sid = rng.choice(sessions)
                ticket = ledger.admit(sid, f"m{i}", "http")
                with lock:
                    admitted.append((ticket.admitted_order, sid, f"m{i}"))
                run_some(store, ledger, rng, budget=1)
            while not (admitted_all.is_set() and not ledger.in_state("queued", "running")):
                if not run_some(store, ledger, rng, budget=5):
                    time.sleep(0.01)
        except BaseException as exc:
            errors.append(exc)
        finally:
            store.close()

    def run_some(store: Any, ledger: Any, rng: random.Random, budget: int) -> bool:
        ran = False
        queued = ledger.in_state("queued")
        rng.shuffle(queued)
        for turn in queued[:budget]:
            session = store.load(turn.session_id)
            started = ledger.start(turn.turn_id, session)
            if not isinstance(started, StartedTurn):
                continue  # LaneBusy (an older turn first) or another process took it
            store.fenced(started.guard).append(session, [TranscriptEntry(REPLY, started.turn_index,
                                                                          text=f"re: {turn.text}")])
            ledger.finalize(started.guard, session, [TranscriptEntry(TURN_FINISHED, started.turn_index,
                                                                     status="done", reason="reply")],
                            "completed", "reply", None, f"re: {turn.text}")
            ran = True
        return ran

    threads = [threading.Thread(target=process, args=(n,)) for n in range(PROCESSES)]
    for thread in threads:
        thread.start()
    while len(admitted) < MESSAGES and not errors:
        time.sleep(0.05)
    admitted_all.set()
    for thread in threads:
        thread.join(120)
    try:
        assert not errors, errors[0]
        assert len(admitted) == MESSAGES
        ledger = backend.ledger(setup, "checker")
        assert {t.state for t in ledger.in_state("queued", "running", "completed")} == {"completed"}
        for sid in sessions:
            expected = [text for _, s, text in sorted(admitted) if s == sid]
            entries = setup.entries(sid)
            users = [e.text for e in entries if e.kind == "user"]
            replies = [e.text for e in entries if e.kind == REPLY]
            assert users == expected  # FIFO: the order the admissions committed in
            assert replies == [f"re: {text}" for text in expected]  # each answered once, in order
        audit = ledger.audit_rows()
        running: dict[str, str] = {}  # lane -> its running turn, replayed from the audit
        for row in audit:
            if row["to_state"] == "running":
                assert row["lane"] not in running, f"two turns of {row['lane']} running at once"
                running[row["lane"]] = row["turn_id"]
            elif row["from_state"] == "running":
                assert running.pop(row["lane"]) == row["turn_id"]
        assert len({r["owner"] for r in audit if r["to_state"] == "running"}) == PROCESSES  # all of them worked
    finally:
        setup.close()
        backend.close()
