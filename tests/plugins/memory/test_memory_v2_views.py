"""`atomic-agent memory phases|links`, links in `export`, and the doctor's memory findings
(a corrupt file, a hand-edited graph, switches that do not fit together)."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.memory.doctor_findings import memory_findings
from atomic_agent.plugins.memory.link_store import LinkStore
from atomic_agent.plugins.memory.memory_database import MemoryDatabase, memory_db_path
from atomic_agent.plugins.memory.note_store import NoteStore
from atomic_agent.storage.sqlite_file import Durability, open_sqlite
from tests.plugins.memory.cli_harness import run_cli

V2 = ("memory_reflection", "memory_links", "memory_rewriter")


def seed_graph(state: Path) -> list[int]:
    db = MemoryDatabase.open(memory_db_path(state))
    ids = [NoteStore(db).store(f"note {i} about deploys").note.id for i in range(3)]
    links = LinkStore(db)
    links.add(ids[0], ids[1], "RELATES_TO")
    links.add(ids[1], ids[2], "CAUSED_BY", source="tool")
    db.close()
    return ids


def test_phases_lists_every_switch_with_its_state(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"memorySegmentation": {"enabled": True, "windowTurns": 4}}))
    rows = {r["block"]: r for r in run_cli(tmp_path, "memory", "phases", "--json", plugins=V2).json()}
    assert rows["memoryLinks"]["state"] == "on" and rows["memoryLinks"]["settings"]["expansionDepth"] == 1
    assert rows["memorySegmentation"]["state"] == "on" and rows["memorySegmentation"]["settings"]["windowTurns"] == 4
    assert rows["memoryTypedNotes"]["state"] == "off" and rows["memoryRewriter"]["state"] == "on"
    bare = {r["block"]: r["state"] for r in run_cli(tmp_path, "memory", "phases", "--json").json()}
    assert "memoryLinks" not in bare and bare["memoryNotes"] == "on"  # an unloaded plugin declares no phase
    assert "typed notes (v2.5 C)" in run_cli(tmp_path, "memory", "phases", plugins=V2).out


EVERY_MEMORY_PLUGIN = ("memory_profile", "memory_notes", "memory_reflection", "memory_embeddings", "memory_links",
                       "memory_rewriter")


def test_phases_keep_their_order_names_and_settings_when_each_plugin_declares_its_own(tmp_path: Path) -> None:
    rows = run_cli(tmp_path, "memory", "phases", "--json", plugins=EVERY_MEMORY_PLUGIN).json()
    assert [(r["phase"], r["block"], r["state"], list(r["settings"])) for r in rows] == [
        ("profile", "memoryProfile", "on", []),
        ("notes", "memoryNotes", "on", []),
        ("lessons (v2 phases 5-7a)", "memoryLessons", "on", ["recallK", "maxEntries", "modelVotes", "maxVote",
                                                             "signalDecay", "deprecationAgeDays", "scoreBlend",
                                                             "outcomeVotes", "profileFilterThreshold"]),
        ("procedures (v2 phase 7b)", "memoryProcedures", "on", ["minRuns", "recallK"]),
        ("reflection", "memoryReflection", "on", ["distilLessons", "detourCalls"]),
        ("embeddings (v2 phase 1B)", "memoryEmbeddings", "off", ["fts5Weight", "vectorWeight", "candidates"]),
        ("links (v2 phase 2)", "memoryLinks", "on", ["autoGenerate", "expansionDepth", "maxExpanded"]),
        ("evolver (v2 phase 3)", "memoryEvolution", "on", ["maxPerWrite", "leaseMs"]),
        ("consolidator (v2 phase 5)", "memoryConsolidation", "on", ["minClusterSize", "cooldownMs"]),
        ("rewriter (v2.5 A)", "memoryRewriter", "on", ["gateMode", "timeoutMs", "historyTurns"]),
        ("segmentation (v2.5 B)", "memorySegmentation", "off", ["triggerEveryTurns", "windowTurns"]),
        ("typed notes (v2.5 C)", "memoryTypedNotes", "off", []),
    ]


def test_phases_lists_the_lesson_vote_and_procedure_switches_as_configured(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({
        "memoryReflection": {"distilLessons": False},
        "memoryLessons": {"modelVotes": False, "signalDecay": 0.8, "profileFilterThreshold": 3},
        "memoryProcedures": {"minRuns": 4}}))
    out = run_cli(tmp_path, "memory", "phases", plugins=EVERY_MEMORY_PLUGIN).out
    for shown in ("distilLessons=False", "modelVotes=False", "signalDecay=0.8", "scoreBlend=0.4",
                  "profileFilterThreshold=3", "outcomeVotes=True", "minRuns=4", "detourCalls=6"):
        assert shown in out, shown


def test_links_lists_the_graph_and_one_notes_edges(tmp_path: Path) -> None:
    a, b, c = seed_graph(tmp_path)
    listed = run_cli(tmp_path, "memory", "links", "--json").json()
    assert listed["total"] == 2 and {(k["from"], k["kind"], k["to"]) for k in listed["links"]} == {
        (a, "RELATES_TO", b), (b, "CAUSED_BY", c)}
    only_c = run_cli(tmp_path, "memory", "links", "--note", f"#{c}", "--json").json()
    assert [(k["from"], k["to"], k["source"]) for k in only_c["links"]] == [(b, c, "tool")]
    table = run_cli(tmp_path, "memory", "links")
    assert table.code == 0 and "CAUSED_BY" in table.out and "2 of 2 links" in table.out
    assert run_cli(tmp_path, "memory", "links", "--note", "x").code == 2
    assert len(run_cli(tmp_path, "memory", "export").json()["links"]) == 2


def test_doctor_reports_a_corrupt_memory_database_and_leaves_it_untouched(tmp_path: Path) -> None:
    garbage = b"not sqlite at all" * 300
    memory_db_path(tmp_path).write_bytes(garbage)
    (finding,) = [f for f in memory_findings(tmp_path) if f.check == "memory"]
    assert finding.level == "error" and "not a usable memory database" in finding.detail
    assert memory_db_path(tmp_path).read_bytes() == garbage


def test_doctor_reports_links_a_hand_edit_left_dangling(tmp_path: Path) -> None:
    a, b, _c = seed_graph(tmp_path)
    conn = open_sqlite(memory_db_path(tmp_path), Durability.NORMAL, foreign_keys=False)
    conn.execute("DELETE FROM memories WHERE id = ?", [a])  # FK off: the cascade does not run
    conn.commit()
    conn.close()
    (finding,) = [f for f in memory_findings(tmp_path) if f.check == "memory.links"]
    assert finding.level == "warn" and "1 of 2 links" in finding.detail
    healthy = tmp_path / "healthy"
    seed_graph(healthy)
    assert [(f.check, f.level, f.detail) for f in memory_findings(healthy)] == [("memory", "ok", "3 notes, 2 links")]


def test_doctor_flags_switches_that_do_not_fit_together(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps({"memoryLinks": {"enabled": False},
                                                      "llama": {"parallel": 1, "reflectionSlot": False}}))
    checks = {f.check: f for f in memory_findings(tmp_path)}
    assert checks["memory.phases"].level == "warn" and checks["memory.slots"].level == "warn"
