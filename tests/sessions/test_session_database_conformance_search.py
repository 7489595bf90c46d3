"""Every backend's transcript search keeps session_database's contract: what was said (user
and reply rows, never tool results) matches by its words, one hit per turn, best first,
scoped by channel and never from the excluded session; a query is words, never syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.transcript_entry import REPLY, TOOL_RESULT, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.transcript_search import SearchQueryError
from tests.sessions.session_backends import OpenedBackend


def _said(store: SessionRepository, user: str, reply: str, tool_text: str = "") -> str:
    state = store.create(Path("/w"))
    rows = [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text=user)]
    if tool_text:
        rows.append(TranscriptEntry(TOOL_RESULT, 0, tool="t", status="ok", text=tool_text, step=0, batch_index=0))
    store.append(state, [*rows, TranscriptEntry(REPLY, 0, text=reply)])
    return state.id


def test_search_finds_what_was_said_one_hit_per_turn(session_backend: OpenedBackend):
    store = session_backend.open()
    port = _said(store, "which port does the staging database use?", "The staging database listens on 5433.")
    other = _said(store, "plan the picnic", "Bring sandwiches.", tool_text="staging database notes in a tool result")
    hits = store.search("staging database port")
    assert [h.session_id for h in hits] == [port]  # tool results are not searched; one hit for the turn
    assert "[staging]" in hits[0].snippet and hits[0].channel == "local" and hits[0].turn_index == 0
    assert session_backend.open().search("sandwiches")[0].session_id == other  # any process finds it
    assert store.search("staging database", exclude_session=port) == []
    assert store.search("staging", channels={"telegram"}) == [] and store.search("staging", channels={"local"})


@pytest.mark.parametrize("query", ["NEAR(staging port)", "staging*", '"unbalanced staging', "text:staging",
                                   "staging & !", "staging | (", "'staging"])
def test_query_syntax_is_searched_as_words(session_backend: OpenedBackend, query: str):
    store = session_backend.open()
    _said(store, "the staging box", "noted")
    assert [h.snippet for h in store.search(query)] == ["the [staging] box"]


def test_a_query_without_words_is_refused_and_a_deleted_session_is_not_found(session_backend: OpenedBackend):
    store = session_backend.open()
    gone = _said(store, "the walrus password", "ok")
    with pytest.raises(SearchQueryError, match="no words"):
        store.search("*** ^ ()")
    store.delete(gone)
    assert store.search("walrus") == []


def test_a_session_is_known_by_who_started_it_and_searched_by_its_channel(session_backend: OpenedBackend):
    store = session_backend.open()
    started: dict[str, str] = {}
    for origin in ("scheduler", "telegram", "http", "tui"):
        session = store.create(session_backend.where / "work")
        ledger = session_backend.ledger(store)
        ledger.admit(session.id, f"from {origin}", origin)
        ledger.admit(session.id, "and a later message", "cli")  # only the first turn decides
        started[origin] = session.id
    assert {o: (store.first_origin(sid), store.channel(sid)) for o, sid in started.items()} == {
        "scheduler": ("scheduler", "local"), "telegram": ("telegram", "telegram"), "http": ("http", "http"),
        "tui": ("tui", "local")}
    fresh = store.create(session_backend.where / "work")
    assert (store.first_origin(fresh.id), store.channel(fresh.id)) == (None, "local")
