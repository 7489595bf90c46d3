"""Phase 3 locked invariants: content is byte-stable across evolves, the consolidation
lease is honoured (stale ones ignored), the allowlist filters before the store, the
per-write cap is hard, the tag cap keeps existing tags, a no-op does not bump updated_at."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_leases import acquire_lease, leased_at, release_lease
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.plugins.memory.note_tag_evolution import evolve_tags
from atomic_agent.plugins.memory_links.link_parser import ProposedEvolve
from atomic_agent.plugins.memory_links.neighbour_evolver import NeighbourEvolver
from tests.plugins.memory_plugins.memory_runtime import ALL_MEMORY, make_memory_runtime
from tests.plugins.memory_plugins.v2_scenario import run_scenario

CONTENT = "  the deploy pipeline runs make deploy — 🚀 with ünïcode\tand tabs  "


def open_notes(tmp_path: Path) -> tuple[MemoryDatabase, NoteStore]:
    db = MemoryDatabase.open(tmp_path / "memory.sqlite")
    return db, NoteStore(db)


def test_content_is_byte_stable_across_many_evolves(tmp_path: Path) -> None:
    db, notes = open_notes(tmp_path)
    note = notes.store(CONTENT, ["ops"], now=1000).note
    raw = db.conn.execute("SELECT content FROM memories WHERE id = ?", [note.id]).fetchone()[0]
    for i in range(25):
        evolve_tags(db, note.id, [f"t{i}"], now=2000 + i)
    assert db.conn.execute("SELECT content FROM memories WHERE id = ?", [note.id]).fetchone()[0] == raw
    db.close()


def test_a_fresh_lease_blocks_the_evolve_and_a_stale_one_does_not(tmp_path: Path) -> None:
    db, notes = open_notes(tmp_path)
    note_id = notes.store("a note", now=1000).note.id
    assert acquire_lease(db, note_id, 60_000, now=10_000)
    assert acquire_lease(db, note_id, 60_000, now=20_000) is False  # single writer
    assert evolve_tags(db, note_id, ["x"], lease_ms=60_000, now=30_000) == "lease_held"
    assert evolve_tags(db, note_id, ["x"], lease_ms=60_000, now=70_001) == "applied"  # the lease went stale
    release_lease(db, note_id)
    assert leased_at(db, note_id) is None
    db.close()


def test_no_change_keeps_updated_at_and_the_tag_cap_keeps_existing_tags(tmp_path: Path) -> None:
    db, notes = open_notes(tmp_path)
    full = notes.store("full", [f"old{i}" for i in range(10)], now=1000).note
    assert evolve_tags(db, full.id, ["new"], now=5000) == "no_change"
    assert notes.get(full.id).tags == full.tags and notes.get(full.id).updated_at == 1000
    small = notes.store("small", ["a"], now=1000).note
    assert evolve_tags(db, small.id, ["a"], now=5000) == "no_change" and notes.get(small.id).updated_at == 1000
    assert evolve_tags(db, small.id, ["b"], now=6000) == "applied"
    assert notes.get(small.id).tags == ("a", "b") and notes.get(small.id).updated_at == 6000
    assert evolve_tags(db, 999, ["b"]) == "missing"
    db.close()


def make_evolver(tmp_path: Path, **cfg: Any) -> tuple[Any, NeighbourEvolver]:
    runtime = make_memory_runtime(tmp_path, None, ALL_MEMORY)
    settings = {"enabled": True, "max_per_write": 2, "lease_ms": 60_000, **cfg}
    return runtime, NeighbourEvolver(runtime, SimpleNamespace(**settings))


async def test_allowlist_filters_before_the_store_and_the_cap_is_hard(tmp_path: Path) -> None:
    runtime, evolver = make_evolver(tmp_path, max_per_write=2)
    notes = runtime.service("memory").note_store()
    ids = [notes.store(f"note {i}").note.id for i in range(4)]
    directives = [ProposedEvolve(ids[3], ("outsider",)), *(ProposedEvolve(i, ("seen",)) for i in ids[:3])]
    counts = evolver.apply("s1", directives, set(ids[:3]))
    assert counts == {"not_in_allowlist": 1, "applied": 2, "cap_hit": 1}
    assert [notes.get(i).tags for i in ids] == [("seen",), ("seen",), (), ()]
    metrics = runtime.service("metrics")
    assert metrics.counter_value("agent.memory.evolution.skipped", session_id="s1", reason="cap_hit") == 1
    await runtime.close()


async def test_invalid_tags_are_counted_never_raised(tmp_path: Path) -> None:
    runtime, evolver = make_evolver(tmp_path)
    note_id = runtime.service("memory").note_store().store("n").note.id
    assert evolver.apply("s", [ProposedEvolve(note_id, ("x" * 80,))], {note_id}) == {"invalid": 1}
    await runtime.close()


async def test_evolve_rides_the_link_generator_call_and_only_grows_tags(tmp_path: Path) -> None:
    plugins = (*ALL_MEMORY, "memory_links")
    _seen, _db, provider = await run_scenario(tmp_path / "s", tmp_path, plugins, {})
    request = provider.link_requests[0]
    assert "EVOLVE #id [tags=" in request.prompt and "entry ::= link-line | evolve-line" in (request.grammar or "")
    db = MemoryDatabase.open(memory_db_path(tmp_path / "s"))
    note = NoteStore(db).get(2)
    db.close()
    assert note.tags == ("pipeline",) and note.content == "docker images for the deploy pipeline are tagged by commit"
    assert provider.metrics.counter_total("agent.memory.evolution.applied") == 1
