"""Full-text search over what was said in past sessions (sessions.sqlite's transcript_fts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.sessions.session_schema import MIGRATIONS
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import REPLY, TOOL_RESULT, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.transcript_search import SearchQueryError, match_expression
from atomic_agent.storage.sqlite_file import Durability, open_sqlite
from atomic_agent.storage.sqlite_migrations import migrate


def said(store: SessionStore, user: str, reply: str, tool_text: str = "") -> str:
    state = store.create(Path("/w"))
    rows = [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text=user)]
    if tool_text:
        rows.append(TranscriptEntry(TOOL_RESULT, 0, tool="t", status="ok", text=tool_text, step=0, batch_index=0))
    store.append(state, [*rows, TranscriptEntry(REPLY, 0, text=reply)])
    return state.id


def test_finds_user_and_reply_rows_one_hit_per_turn_best_first(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    port = said(store, "which port does the staging database use?", "The staging database listens on 5433.")
    other = said(store, "plan the picnic", "Bring sandwiches.", tool_text="staging database notes in a tool result")
    hits = store.search("staging database port")
    assert [h.session_id for h in hits] == [port]  # tool results are not indexed; one hit for the turn
    assert "[staging]" in hits[0].snippet and hits[0].channel == "local"
    assert store.search("sandwiches")[0].session_id == other
    assert store.search("staging database", exclude_session=port) == []
    store.close()


@pytest.mark.parametrize("query", ['NEAR(staging port)', 'staging*', '"unbalanced staging', 'text:staging', 'staging OR',
                                   'AND NOT staging', "^staging", "staging -port", "{text}: staging"])
def test_fts_syntax_in_a_query_is_searched_literally_never_interpreted(tmp_path: Path, query: str) -> None:
    store = SessionStore(tmp_path)
    said(store, "the staging box", "noted")
    hits = store.search(query)  # no sqlite3.OperationalError, whatever the query holds
    assert [h.snippet for h in hits] == ["the [staging] box"]
    store.close()


def test_match_expression_quotes_every_word_and_refuses_a_query_without_words() -> None:
    assert match_expression('say "hi" NEAR(x)') == '"say" OR "hi" OR "near" OR "x"'
    with pytest.raises(SearchQueryError, match="no words"):
        match_expression("*** ^ ()")
    with pytest.raises(SearchQueryError, match="must be text"):
        match_expression(None)  # type: ignore[arg-type]


def test_a_deleted_session_leaves_the_index(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    gone = said(store, "the walrus password", "ok")
    store.delete(gone)
    assert store.search("walrus") == []
    store.close()


def test_rows_written_before_the_migration_are_indexed_once(tmp_path: Path) -> None:
    conn = open_sqlite(tmp_path / "sessions.sqlite", Durability.FULL)
    migrate(conn, MIGRATIONS[:-1])
    conn.execute("insert into sessions (id, created_at, updated_at, working_dir, status, title) "
                 "values ('old', 'x', 'x', '/w', 'idle', '')")
    conn.execute("insert into transcript (session_id, seq, turn_index, kind, text) values ('old', 0, 0, 'user', "
                 "'the aardvark migration')")
    conn.commit()
    conn.close()
    store = SessionStore(tmp_path)
    assert [h.session_id for h in store.search("aardvark")] == ["old"]
    store.close()
