"""User text never reaches FTS5 MATCH as syntax: injection inputs must not raise."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.memory.fts_query import build_match_query, query_terms
from atomic_agent.plugins.memory.memory_database import MemoryDatabase
from atomic_agent.plugins.memory.note_store import NoteStore

INJECTIONS = [
    '"unterminated quote',
    'say "hello" and "goodbye"',
    "NEAR(deploy script, 2)",
    "deploy NEAR script",
    "deploy*",
    "* ** ***",
    "((deploy",
    "deploy))) OR (",
    "content: deploy",
    "tags:ops OR context:x",
    "^deploy",
    "deploy AND OR NOT",
    "NOT deploy",
    "-deploy +script",
    "{content tags}: deploy",
    "deploy\x00script",
    "'; DROP TABLE memories; --",
    "",
    "   ",
    "the and of what when",
    "ünïcödé 日本語 deploy",
]


@pytest.mark.parametrize("text", INJECTIONS)
def test_fts_syntax_in_user_text_never_raises_and_still_finds_words(database: MemoryDatabase, text: str) -> None:
    store = NoteStore(database)
    store.store("the deploy script lives in ops")
    hits = store.recall(text, 5)  # must not raise
    if "deploy" in text.lower():
        assert len(hits) == 1
    assert store.count() == 1  # nothing was dropped or altered


def test_query_building_drops_stop_words_single_chars_and_duplicates() -> None:
    assert query_terms("What did Caroline say about the a b Caroline painting?") == ["caroline", "painting"]
    assert build_match_query("When is it?") is None
    assert build_match_query('deploy "now"') == '"deploy" OR "now"'


def test_query_terms_are_capped() -> None:
    text = " ".join(f"word{i}" for i in range(100))
    assert len(query_terms(text)) == 32
