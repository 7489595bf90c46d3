"""Phase 2 locked invariants at the store: FK cascade on both sides, no self-loops, a
bounded BFS that walks both directions, and the multi-hop demo."""

from __future__ import annotations

import itertools
import sqlite3
from pathlib import Path

import pytest

from atomic_agent.plugins.memory.link_store import LinkStore, clamp_depth
from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.memory_errors import MemoryValidationError
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore


def chain(tmp_path: Path, n: int) -> tuple[MemoryDatabase, NoteStore, LinkStore, list[int]]:
    db = MemoryDatabase.open(tmp_path / "memory.sqlite")
    notes = NoteStore(db, max_entries=10_000)
    ids, _ = notes.store_many([NoteInput(f"note number {i}") for i in range(n)])
    return db, notes, LinkStore(db), ids


def test_deleting_either_endpoint_cascades_the_link(tmp_path: Path) -> None:
    db, notes, links, (a, b, c) = chain(tmp_path, 3)
    assert links.add(a, b, "RELATES_TO") and links.add(c, a, "CAUSED_BY")
    notes.forget(a)  # a is the source of one edge and the target of the other
    assert links.count() == 0
    db.close()


def test_self_loops_are_rejected_by_the_store_and_the_table(tmp_path: Path) -> None:
    db, _notes, links, (a, _b) = chain(tmp_path, 2)
    with pytest.raises(MemoryValidationError, match="itself"):
        links.add(a, a, "RELATES_TO")
    with pytest.raises(sqlite3.IntegrityError):  # even SQL that skips the store cannot add one
        with db.write() as conn:
            conn.execute("INSERT INTO memory_links (from_id, to_id, kind, created_at) VALUES (?, ?, 'RELATES_TO', 0)",
                         [a, a])
    assert links.count() == 0
    db.close()


def test_unknown_kinds_and_missing_endpoints_write_nothing(tmp_path: Path) -> None:
    db, _notes, links, (a, b) = chain(tmp_path, 2)
    with pytest.raises(MemoryValidationError, match="kind"):
        links.add(a, b, "LIKES")
    assert links.add(a, 999_999, "RELATES_TO") is False  # FK refuses a dangling edge
    assert links.add(a, b, "relates_to") and links.add(a, b, "RELATES_TO") is False  # duplicate triple
    assert links.count() == 1
    db.close()


def test_bfs_is_bounded_by_depth_and_max_expanded_and_walks_both_directions(tmp_path: Path) -> None:
    db, _notes, links, ids = chain(tmp_path, 8)
    for left, right in itertools.pairwise(ids):
        links.add(right, left, "REFERENCES")  # edges point backwards: expansion must walk them in reverse
    assert links.expand([ids[0]], depth=1) == [ids[1]]
    assert links.expand([ids[0]], depth=2) == ids[1:3]
    assert links.expand([ids[0]], depth=99) == ids[1:4]  # clamped to 3 hops
    assert clamp_depth(0) == 1 and clamp_depth(7) == 3
    assert links.expand([ids[3]], depth=3, max_expanded=2) == [ids[2], ids[4]]
    assert links.expand([], depth=3) == [] and links.expand([ids[0]], max_expanded=0) == []
    db.close()


def test_a_hot_node_cannot_blow_up_the_expansion(tmp_path: Path) -> None:
    db, _notes, links, ids = chain(tmp_path, 80)
    for other in ids[1:]:
        links.add(ids[0], other, "RELATES_TO")
    assert len(links.expand([ids[0]], depth=3, max_expanded=1000)) == 50  # the hard ceiling
    db.close()


def test_multi_hop_demo_only_the_seed_matches_and_links_surface_the_chain(tmp_path: Path) -> None:
    db = MemoryDatabase.open(tmp_path / "memory.sqlite")
    notes = NoteStore(db)
    seed = notes.store("Kafka consumer lag alert fired on the billing cluster").note.id
    cause = notes.store("Root cause: a rebalance storm after the deploy").note.id
    fix = notes.store("Pinned session.timeout.ms to 45s; storms stopped").note.id
    links = LinkStore(db)
    links.add(seed, cause, "CAUSED_BY")
    links.add(cause, fix, "RELATES_TO")
    assert [h.note.id for h in notes.recall("kafka lag alert", 5)] == [seed]
    assert links.expand([seed], depth=2) == [cause, fix]
    db.close()
