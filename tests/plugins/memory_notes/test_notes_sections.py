"""`### recalled` (recall slot) and `### memory-index` (memory slot), deduplicated by id."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import store_clock
from atomic_agent.hook_records import TurnStart
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from atomic_agent.plugins.memory_notes.note_lines import pointer_line, preview
from tests.plugins.memory_plugins.memory_runtime import make_memory_runtime, phase


def seed(state: Path, notes: list[NoteInput]) -> list[int]:
    db = MemoryDatabase.open(memory_db_path(state))
    ids, _ = NoteStore(db, max_entries=100_000).store_many(notes)
    db.close()
    return ids


def test_recalled_holds_top_k_hits_and_the_index_never_repeats_them(tmp_path: Path) -> None:
    ids = seed(tmp_path, [NoteInput("kubernetes cluster upgrade notes", ["k8s"]), NoteInput("grocery list: eggs"),
                          NoteInput("kubernetes ingress broke after the upgrade"), NoteInput("dentist on friday")])
    runtime = make_memory_runtime(tmp_path, plugins=["memory_notes"],
                                  config={"memoryNotes": {"recallInjection": {"k": 2}}})
    sections = {s.heading: s for s in phase(runtime, "memory-notes").sections("s", "kubernetes upgrade?")}
    assert sections["recalled"].slot == "recall" and sections["memory-index"].slot == "memory"
    recalled_ids = [int(line.split()[0][1:]) for line in sections["recalled"].body.splitlines()]
    index_ids = [int(line.split()[0][1:]) for line in sections["memory-index"].body.splitlines()]
    assert sorted(recalled_ids) == [ids[0], ids[2]]
    assert index_ids == [ids[3], ids[1]]  # newest first, recalled ones left out
    today = store_clock.now_iso()[:10]
    assert f"#{ids[0]} (tool, {today}) [k8s] kubernetes cluster upgrade notes" in sections["recalled"].body.splitlines()
    assert sections["recalled"].source == sections["memory-index"].source == "stored notes"


def test_previews_are_cut_to_their_char_limits() -> None:
    class N:
        id, tags, content, source, created_at = 7, ("a", "b"), "word " * 100, "reflection", 0

    assert pointer_line(N(), 20) == "#7 (reflection, 1970-01-01) [a, b] " + preview(N.content, 20)
    assert len(preview(N.content, 20)) == 20 and preview(N.content, 20).endswith("…")
    assert preview("short\n\ntext", 60) == "short text"


def test_sections_are_capped_with_truncated(tmp_path: Path) -> None:
    seed(tmp_path, [NoteInput(f"note {i} with a reasonably long body about many things") for i in range(60)])
    runtime = make_memory_runtime(tmp_path, plugins=["memory_notes"],
                                  config={"memoryNotes": {"index": {"limit": 60, "maxTokens": 60}}})
    index = phase(runtime, "memory-notes").sections("s", "")[0]
    assert index.heading == "memory-index" and index.body.endswith("[truncated]")
    assert len(index.body.splitlines()) < 20


def test_no_notes_means_no_sections(tmp_path: Path) -> None:
    runtime = make_memory_runtime(tmp_path, plugins=["memory_notes"])
    assert phase(runtime, "memory-notes").sections("s", "anything") == []


def test_sub_blocks_switch_each_section_off(tmp_path: Path) -> None:
    seed(tmp_path, [NoteInput("python packaging notes")])
    both_off = {"index": {"enabled": False}, "recallInjection": {"enabled": False}}
    off = make_memory_runtime(tmp_path, plugins=["memory_notes"], config={"memoryNotes": both_off})
    assert phase(off, "memory-notes").sections("s", "python") == []


def test_prefetch_once_per_turn_serves_every_step(tmp_path: Path) -> None:
    seed(tmp_path, [NoteInput("python packaging notes")])
    runtime = make_memory_runtime(tmp_path, plugins=["memory_notes"])
    notes = phase(runtime, "memory-notes")
    notes.before_turn(TurnStart("s", 0, "python packaging?", str(tmp_path)))
    for _step in range(5):
        notes.sections("s", "python packaging?")
    metrics = runtime.service("metrics")
    assert metrics.counter_value("agent.memory.notes.recall", source="section", outcome="hit") == 1


def test_recall_feedback_is_off_by_default_and_on_bridges_to_related_notes(tmp_path: Path) -> None:
    notes = [NoteInput("pottery class on tuesdays keeps me calm, clay and wheel"),
             NoteInput("the pottery wheel and clay bowls help me relax"),
             NoteInput("glazing clay on the wheel is my therapy"), NoteInput("the train was late again")]
    ids = seed(tmp_path / "off", notes)
    seed(tmp_path / "on", notes)

    def recalled(state: Path, inject: dict) -> list[int]:
        runtime = make_memory_runtime(state, plugins=["memory_notes"],
                                      config={"memoryNotes": {"recallInjection": {"k": 3, **inject}}})
        section = {s.heading: s for s in phase(runtime, "memory-notes").sections("s", "pottery relax")}["recalled"]
        return [int(line.split()[0][1:]) for line in section.body.splitlines()]

    off = recalled(tmp_path / "off", {})
    assert ids[2] not in off
    on = recalled(tmp_path / "on", {"feedbackTerms": 3, "feedbackDocs": 2})
    assert on[:2] == off[:2] and ids[2] in on
