"""Pseudo-relevance feedback in NoteStore.recall: the best hits' shared words bridge to a
note that shares no word with the query; without feedback recall is unchanged; feedback
words never repeat the query's; the fused ranking keeps the first recall's order on ties;
an empty first recall costs no second query."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import NoteInput, NoteStore
from atomic_agent.plugins.memory.query_feedback import QueryFeedback, feedback_terms, fuse

BRIDGE = [NoteInput("pottery class on tuesdays keeps me calm, clay and wheel"),
          NoteInput("the pottery wheel and clay bowls help me relax"),
          NoteInput("glazing clay on the wheel is my therapy"),  # shares no word with the query
          NoteInput("the train was late again"), NoteInput("bought new running shoes")]


def test_feedback_words_bridge_to_a_note_without_the_querys_words(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    ids, _ = store.store_many(BRIDGE)
    plain = [h.note.id for h in store.recall("pottery relax", 5)]
    assert ids[2] not in plain
    fed = [h.note.id for h in store.recall("pottery relax", 5, feedback=QueryFeedback(docs=2, terms=3))]
    assert fed[:2] == plain[:2] and ids[2] in fed and ids[3] not in fed


def test_without_feedback_recall_is_unchanged(database: MemoryDatabase) -> None:
    store = NoteStore(database)
    store.store_many(BRIDGE)
    assert store.recall("pottery relax", 5) == store.recall("pottery relax", 5, feedback=None)
    assert store.recall("nothing matches this", 5, feedback=QueryFeedback()) == []


def test_feedback_terms_skip_the_querys_words_and_weigh_by_rank() -> None:
    notes = [SimpleNamespace(content="clay wheel pottery"), SimpleNamespace(content="wheel glaze"),
             SimpleNamespace(content="kiln")]
    assert feedback_terms("pottery", notes, QueryFeedback(docs=2, terms=10)) == ["wheel", "clay", "glaze"]
    assert feedback_terms("pottery", notes, QueryFeedback(docs=3, terms=1)) == ["wheel"]


def test_fusion_sums_both_rankings_and_the_first_wins_ties() -> None:
    def hit(i: int) -> SimpleNamespace:
        return SimpleNamespace(note=SimpleNamespace(id=i))

    first, second = [hit(1), hit(2)], [hit(2), hit(3)]
    assert [h.note.id for h, _ in fuse(first, second, 0.5, 10)] == [2, 1, 3]
    assert [h.note.id for h, _ in fuse([hit(1)], [hit(2)], 1.0, 10)] == [1, 2]
    assert len(fuse(first, second, 0.5, 1)) == 1


@pytest.mark.parametrize("settings", [{"docs": 0}, {"terms": 0}, {"weight": 0.0}, {"weight": 1.5}])
def test_out_of_range_settings_are_refused(settings: dict) -> None:
    with pytest.raises(ValueError):
        QueryFeedback(**settings)
