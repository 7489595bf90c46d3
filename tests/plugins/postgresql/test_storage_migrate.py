"""`atomic-agent storage migrate --to URL` through the real console script: an embedded state
dir's sessions, transcripts, ledger, audit, steers and keys land in PostgreSQL verified, the
counters continue past every id the file used, a runtime continues the session there, and a
target that is not empty is refused with nothing written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import REPLY, TURN_FINISHED, TranscriptEntry
from atomic_agent.turns.durable_steering import SteerQueue
from atomic_agent.turns.request_keys import RequestKey
from atomic_agent.turns.turn_ledger import TurnLedger
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on


def _embedded_state(state: Path) -> dict[str, Any]:
    """A state dir with a finished turn, a queued one, a steer, a key and a deleted (highest) steer id."""
    store = SessionStore(state)
    session = store.create(state, title="héllo")
    ledger, steers = TurnLedger(store, "old-host"), SteerQueue(store, "old-host")
    first = ledger.admit(session.id, "first", "cli")
    started = ledger.start(first.turn_id, session)
    store.append(session, [TranscriptEntry(REPLY, 0, text="answer", details={"k": [1]})], guard=started.guard)
    ledger.finalize(started.guard, session, [TranscriptEntry(TURN_FINISHED, 0, status="done", reason="reply")],
                    "completed", "reply", None, "answer")
    with store.write() as handle:
        queued = ledger.admit_in(handle, session.id, "second", "http", session.id, "t-second")
        ledger.remember_key_in(handle, RequestKey.of("client-key-1", "second"), queued.turn_id, session.id)
    steers.enqueue(session.id, first.turn_id, "still queued")
    gone = steers.enqueue(session.id, first.turn_id, "claimed")  # the highest id the file used, then deleted
    with store.write() as handle:
        steers.claim(handle, [gone])
    facts = {"session": session.id, "entries": store.entries(session.id), "audit": len(ledger.audit_rows()),
             "order": queued.admitted_order, "steer": gone}
    store.close()
    return facts


def _migrate(state: Path, url: str, password: str) -> Any:
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={password}\n")
    return run_cli(["--state-dir", str(state), "storage", "migrate", "--to", url, "--json"],
                   env={"ATOMIC_AGENT_STATE_DIR": ""})


async def test_migrate_copies_the_state_verified_and_a_runtime_continues_on_postgresql(tmp_path: Path,
                                                                                      postgresql_database: Any):
    server, name = postgresql_database
    state = tmp_path / "state"
    facts = _embedded_state(state)
    result = _migrate(state, server.url(name), server.password)
    assert result.returncode == 0, result.stderr
    assert server.password not in result.stdout + result.stderr
    tables = {t["table"]: t["rows"] for t in json.loads(result.stdout)["tables"]}
    assert tables == {"sessions": 1, "transcript": len(facts["entries"]), "turns": 2, "turn_audit": facts["audit"], "steer_queue": 1,
                      "idempotency_keys": 1}
    backend = backend_on(postgresql_database)
    store = backend.open_store()
    try:
        assert store.entries(facts["session"]) == facts["entries"] and store.load(facts["session"]).title == "héllo"
        ledger, steers = backend.ledger(store, "new-host"), backend.steers(store, "new-host")
        assert ledger.turn_for_key("client-key-1").turn_id == "t-second"
        assert ledger.admit(facts["session"], "later", "cli").admitted_order == facts["order"] + 1
        assert steers.enqueue(facts["session"], "t", "new") == facts["steer"] + 1  # never the deleted id again
        assert [s.text for s in steers.left_by(lambda owner: False)][:1] == ["still queued"]
    finally:
        store.close()
        backend.close()
    runtime = await runtime_for_test(tmp_path / "host-b", plugins={"postgresql": postgresql_plugin},
                                     config={"storage": {"url": server.url(name)}},
                                     environ={"ATOMIC_AGENT_STORAGE_PASSWORD": server.password},
                                     provider=ScriptedProvider([]))
    try:
        result_turn = await runtime.run_turn("third", session_id=facts["session"])
        assert result_turn.state == "completed"
        users = [e.text for e in runtime.sessions.load(facts["session"]).entries if e.kind == "user"]
        assert users == ["first", "second", "later", "third"]  # the migrated queue answered first, in order
    finally:
        await runtime.close()


def test_migrate_refuses_a_database_that_is_not_empty(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    state = tmp_path / "state"
    _embedded_state(state)
    assert _migrate(state, server.url(name), server.password).returncode == 0
    again = _migrate(state, server.url(name), server.password)
    assert again.returncode != 0 and "not empty" in again.stderr and "1 sessions" in again.stderr
    backend = backend_on(postgresql_database)
    store = backend.open_store()
    try:
        assert len(store.session_ids()) == 1  # nothing of the refused copy landed
    finally:
        store.close()
        backend.close()


def _migrate_back(state: Path, url: str, password: str) -> Any:
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({"storage": {"url": url}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={password}\n")
    return run_cli(["--state-dir", str(state), "storage", "migrate", "--to", "sqlite", "--json"],
                   env={"ATOMIC_AGENT_STATE_DIR": ""})


def test_migrate_back_to_sqlite_round_trips_verified_and_counters_continue(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    facts = _embedded_state(tmp_path / "first")
    assert _migrate(tmp_path / "first", server.url(name), server.password).returncode == 0
    back = tmp_path / "back"
    result = _migrate_back(back, server.url(name), server.password)
    assert result.returncode == 0, result.stderr
    assert server.password not in result.stdout + result.stderr
    tables = {t["table"]: t["rows"] for t in json.loads(result.stdout)["tables"]}
    assert tables == {"sessions": 1, "transcript": len(facts["entries"]), "turns": 2, "turn_audit": facts["audit"],
                      "steer_queue": 1, "idempotency_keys": 1}
    store = SessionStore(back)
    try:
        assert store.entries(facts["session"]) == facts["entries"] and store.load(facts["session"]).title == "héllo"
        ledger, steers = TurnLedger(store, "home-again"), SteerQueue(store, "home-again")
        assert ledger.turn_for_key("client-key-1").turn_id == "t-second"
        assert ledger.admit(facts["session"], "later", "cli").admitted_order == facts["order"] + 1
        assert steers.enqueue(facts["session"], "t", "new") == facts["steer"] + 1  # never a used id again
    finally:
        store.close()
    again = _migrate_back(back, server.url(name), server.password)
    assert again.returncode != 0 and "not empty" in again.stderr


def test_migrate_back_without_storage_url_says_what_to_set(tmp_path: Path):
    state = tmp_path / "state"
    state.mkdir()
    result = run_cli(["--state-dir", str(state), "storage", "migrate", "--to", "sqlite"],
                     env={"ATOMIC_AGENT_STATE_DIR": "", "ATOMIC_AGENT_STORAGE_URL": ""})
    assert result.returncode != 0 and "storage.url is not set" in result.stderr
