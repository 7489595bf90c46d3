"""The real runtime on PostgreSQL: storage.url (password from the environment `.env` feeds)
selects the plugin's backend through the core's `session_backend` service, so two runtimes
with separate state directories (two hosts) share sessions, transcripts and the turn ledger;
a database that cannot be used refuses the turn before anything is acknowledged, and the
same runtime admits again once the database answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, SessionStoreError, runtime_for_test
from atomic_agent.plugins.postgresql.testing.pg_server import free_port
from tests.plugins.postgresql.pg_kit import backend_on


def _reply(text: str) -> str:
    return '[{"tool": "reply", "args": {"text": "%s"}}]' % text


async def _runtime(state: Path, url: str, password: str, replies: list[str]) -> Any:
    return await runtime_for_test(state, plugins={"postgresql": postgresql_plugin},
                                  config={"storage": {"url": url}}, environ={"ATOMIC_AGENT_STORAGE_PASSWORD": password},
                                  provider=ScriptedProvider([_reply(r) for r in replies]))


async def test_two_runtimes_on_one_database_continue_each_others_sessions(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    url = server.url(name)
    first = await _runtime(tmp_path / "host-a", url, server.password, ["one"])
    second = await _runtime(tmp_path / "host-b", url, server.password, ["two"])
    try:
        assert first.session_backend.name == "postgresql"
        answered = await first.run_turn("first message")
        assert (answered.status, answered.reply) == ("done", "one")
        session_id = first.sessions.list()[0]["id"]
        continued = await second.run_turn("second message", session_id=session_id)
        assert (continued.status, continued.reply) == ("done", "two")
        said = [e.text for e in first.sessions.load(session_id).entries if e.kind in ("user", "assistant_reply")]
        assert said == ["first message", "one", "second message", "two"]
        turns = first.lifecycle.ledger.lane(session_id)
        assert [(t.state, t.owner) for t in turns] == [("completed", first.lifecycle.lease.owner),
                                                      ("completed", second.lifecycle.lease.owner)]
        assert first.lifecycle.lease.owner != second.lifecycle.lease.owner
    finally:
        await first.close()
        await second.close()
    assert not (tmp_path / "host-a" / "sessions.sqlite").exists()  # nothing went to the embedded store
    backend = backend_on(postgresql_database)
    store = backend.open_store()
    try:
        assert [r["id"] for r in store.list()] == [session_id]  # the database alone holds the state
    finally:
        store.close()
        backend.close()


async def test_an_unreachable_database_refuses_the_turn_before_acknowledging_it(tmp_path: Path,
                                                                                 postgresql_database: Any):
    server, name = postgresql_database
    secret = "not-the-" + server.password
    runtime = await _runtime(tmp_path / "state", f"postgresql://agent@127.0.0.1:{free_port()}/{name}", secret, ["x"])
    try:
        with pytest.raises(SessionStoreError, match=r"cannot be used.*Nothing was admitted") as refused:
            await runtime.run_turn("lost?")
        assert secret not in str(refused.value) and "doctor" in str(refused.value)
    finally:
        await runtime.close()
    assert not (tmp_path / "state" / "sessions.sqlite").exists()  # no silent fall back to SQLite


async def test_a_wrong_password_is_refused_without_showing_it(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    runtime = await _runtime(tmp_path / "state", server.url(name), "wrong-password-123", ["x"])
    try:
        with pytest.raises(SessionStoreError, match="password authentication failed") as refused:
            await runtime.run_turn("hello")
        assert "wrong-password-123" not in str(refused.value)
    finally:
        await runtime.close()


async def test_a_runtime_started_while_the_database_is_down_admits_once_it_is_back(tmp_path: Path,
                                                                                    postgresql_database: Any):
    server, name = postgresql_database
    runtime = await _runtime(tmp_path / "state", server.url(name), server.password, ["back"])
    server.stop()
    try:
        with pytest.raises(SessionStoreError, match="cannot be used"):
            await runtime.run_turn("while down")
        server.start()
        answered = await runtime.run_turn("after")
        assert (answered.status, answered.reply) == ("done", "back")
        said = [e.text for e in runtime.sessions.load(runtime.sessions.list()[0]["id"]).entries if e.kind == "user"]
        assert said == ["after"]  # the refused message was never admitted anywhere
    finally:
        if server.pg_ctl("status", check=False).returncode != 0:
            server.start()
        await runtime.close()


async def test_a_storage_url_that_is_not_postgresql_refuses_every_turn_with_how_to_write_it(tmp_path: Path):
    runtime = await _runtime(tmp_path / "state", "mysql://agent:hunter2@db/atomic", "", ["x"])
    try:
        with pytest.raises(Exception, match="not a PostgreSQL URL") as refused:
            await runtime.run_turn("hello")
        assert "hunter2" not in str(refused.value)
    finally:
        await runtime.close()
    assert not (tmp_path / "state" / "sessions.sqlite").exists()  # never a silent fall back to SQLite
