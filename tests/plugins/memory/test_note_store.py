"""NoteStore on real SQLite files: writes, FIFO cap, FTS sync, recall filters, limits."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.memory_errors import MemoryValidationError
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from atomic_agent.plugins.metrics.metrics_registry import MetricsRegistry


def test_store_get_recall_and_forget_round_trip(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    note = store.store("  The deploy script lives in ops/deploy.sh  ", ["Ops", "#deploy", "ops"]).note
    assert note.content == "The deploy script lives in ops/deploy.sh"
    assert note.tags == ("ops", "deploy")
    assert store.get(note.id) == note
    assert [h.note.id for h in store.recall("where is the deploy script?")] == [note.id]
    assert store.forget(note.id) is True
    assert store.forget(note.id) is False
    assert store.recall("deploy") == [] and store.fts_count() == 0


def test_recall_ranks_by_bm25_and_matches_stems(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    weak = store.store("running shoes were mentioned once among many other unrelated words here").note
    strong = store.store("running running runs ran: the runner keeps running").note
    ids = [h.note.id for h in store.recall("run")]
    assert ids[0] == strong.id and weak.id in ids


def test_fifo_eviction_drops_oldest_by_updated_at_then_id(database: MemoryDatabase, frozen_clock: list[int]) -> None:
    metrics = MetricsRegistry()
    store = NoteStore(database, max_entries=3, metrics=metrics)
    frozen_clock.append(2000)
    late = store.store("written at t=2000").note
    frozen_clock.append(1000)
    early_a = store.store("written at t=1000 first").note
    early_b = store.store("written at t=1000 second").note
    frozen_clock.append(3000)
    outcome = store.store("written at t=3000")
    assert outcome.evicted == (early_a.id,)
    assert {n.id for n in store.all_notes()} == {late.id, early_b.id, outcome.note.id}
    assert metrics.counter_value("agent.memory.notes.evicted") == 1


def test_ten_thousand_notes_flood_stays_at_the_cap_with_fts_in_sync(database: MemoryDatabase) -> None:
    store = NoteStore(database, max_entries=1000)
    for i in range(10_000):
        store.store(f"flood note number {i} about topic{i % 37}", ["flood"])
    assert store.count() == 1000 == store.fts_count()
    kept = [n.content for n in store.all_notes()]
    assert kept[0] == "flood note number 9000 about topic9" and kept[-1].startswith("flood note number 9999")
    assert all(h.note.id > 9000 for h in store.recall("topic3", 50))


def test_store_many_validates_everything_before_writing_anything(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    with pytest.raises(MemoryValidationError):
        store.store_many([NoteInput("fine"), NoteInput("   ")])
    assert store.count() == 0
    ids, evicted = store.store_many([NoteInput("one"), NoteInput("two")])
    assert len(ids) == 2 and evicted == ()


@pytest.mark.parametrize("content, tags, kwargs, fragment", [
    ("", None, {}, "non-empty"),
    ("x" * 2001, None, {}, "2001 characters; the limit is 2000"),
    ("ok", ["t"] * 1 + [f"t{i}" for i in range(10)], {}, "at most 10 tags"),
    ("ok", ["bad tag!"], {}, "note tag"),
    ("ok", ["x" * 40], {}, "note tag"),
    ("ok", None, {"scope": "everywhere"}, "scope"),
    ("ok", None, {"scope": "workdir"}, "needs workingDir"),
    ("ok", None, {"source": "Not A Word"}, "source"),
])
def test_bad_note_input_is_refused_with_the_reason(database: MemoryDatabase, content: str, tags: list[str] | None,
                                                    kwargs: dict[str, str], fragment: str) -> None:
    with pytest.raises(MemoryValidationError) as caught:
        NoteStore(database).store(content, tags, **kwargs)
    assert fragment in str(caught.value)
    assert NoteStore(database).count() == 0


def test_workdir_notes_are_recalled_only_in_their_working_dir(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    store.store("global lint rule: tabs", scope="global")
    store.store("project lint rule: spaces", scope="workdir", working_dir="/p/a")
    assert len(store.recall("lint rule", working_dir="/p/a")) == 2
    assert [h.note.content for h in store.recall("lint rule", working_dir="/p/b")] == ["global lint rule: tabs"]
    assert len(store.recall("lint rule")) == 2
    assert [h.note.scope for h in store.recall("lint rule", scope="workdir")] == ["workdir"]


def test_recent_lists_newest_first_without_excluded_ids(database: MemoryDatabase, frozen_clock: list[int]) -> None:
    store = NoteStore(database)
    ids = []
    for i in range(5):
        frozen_clock.append(1000 + i)
        ids.append(store.store(f"note {i}").note.id)
    assert [n.id for n in store.recent(3, exclude_ids=[ids[4]])] == [ids[3], ids[2], ids[1]]


def test_context_is_searchable_but_separate_from_content(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    note = store.store("Sure, I will", context="Can you water the orchids tomorrow?", meta={"diaId": "D1:2"}).note
    hit = store.recall("orchids")[0].note
    assert hit.id == note.id and hit.content == "Sure, I will" and hit.meta == {"diaId": "D1:2"}
