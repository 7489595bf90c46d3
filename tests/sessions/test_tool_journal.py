"""The journal commits calls before anything runs and results strictly in call order."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.tool_journal import ToolJournal


def test_a_later_result_waits_for_every_earlier_one(tmp_path: Path):
    store = SessionStore(tmp_path)
    state = store.create(tmp_path)
    journal = ToolJournal(store, state, 0, 0)
    journal.commit_calls([(0, "a", {}), (1, "b", {}), (2, "c", {})], "why")
    assert [e.kind for e in store.entries(state.id)] == ["assistant_tool_call"] * 3
    journal.commit_result(2, "c", "ok", "C", {})
    journal.commit_result(1, "b", "ok", "B", {})
    assert [e.kind for e in store.entries(state.id)].count("tool_result") == 0  # both wait for call 0
    journal.commit_result(0, "a", "ok", "A", {})
    rows = store.entries(state.id)
    assert [e.text for e in rows if e.kind == "tool_result"] == ["A", "B", "C"]
    assert rows[0].reasoning == "why" and rows[1].reasoning is None and journal.complete
    store.close()


def test_abandon_keeps_results_in_hand_and_settles_the_rest_in_order(tmp_path: Path):
    store = SessionStore(tmp_path)
    state = store.create(tmp_path)
    journal = ToolJournal(store, state, 0, 0)
    journal.commit_calls([(0, "a", {}), (1, "b", {})], None)
    journal.commit_result(1, "b", "ok", "B", {})
    journal.abandon("cancelled", "cancelled before it finished")
    results = [e for e in store.entries(state.id) if e.kind == "tool_result"]
    assert [(r.batch_index, r.status, r.text) for r in results] == [(0, "cancelled", "cancelled before it finished"),
                                                                     (1, "ok", "B")]
    store.close()
