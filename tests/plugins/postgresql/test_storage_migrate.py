"""`atomic-agent storage migrate --to URL` through the real console script: an embedded state
dir's whole state (sessions, transcripts, ledger, audit, steers and keys; approvals and their
audit; tasks and runs; webhook and Telegram deliveries; MCP drift approvals) lands in
PostgreSQL verified and comes back with identical digests, the counters continue past every id
the files used, a runtime and runtime-less commands continue there, a target that is not empty
is refused with nothing written, and a table that does not verify keeps nothing."""

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
    tables = {t["table"]: t["rows"] for t in json.loads(result.stdout)["tables"] if t["rows"]}
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
    tables = {t["table"]: t["rows"] for t in json.loads(result.stdout)["tables"] if t["rows"]}
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


def _plugins_state(state: Path) -> dict[str, Any]:
    """Beside the sessions: an approval (and two audit lines), a task with two runs (the
    highest run id deleted), webhook marks and a key, Telegram records, MCP drift approvals."""
    from atomic_agent.approval.approval_audit_log import AUDIT_FILE, ApprovalAuditLog
    from atomic_agent.approval.approval_records import ApprovalRecords, FrozenCall
    from atomic_agent.plugins.mcp.drift_file import DriftFile
    from atomic_agent.plugins.serve.webhook_deliveries import WebhookDeliveries
    from atomic_agent.plugins.tasks.task_database import TaskDatabase, tasks_db_path
    from atomic_agent.plugins.tasks.task_service import TaskService
    from atomic_agent.plugins.tasks.tasks_config import TasksConfig
    from atomic_agent.plugins.telegram.delivery_store import DeliveryStore

    records = ApprovalRecords.for_state_dir(state)
    approval = records.create(kind="approval", session_id="s-1", category="shell", level=2, summary="rm -rf büld",
                              frozen=FrozenCall("shell", '{"cmd":"rm"}', argv=("rm",)), ttl_s=3600)
    records.close()
    audit = ApprovalAuditLog(state / "audit" / AUDIT_FILE)
    audit.append(approval_id=approval.id, decision="once", by="operator", summary="rm -rf büld")
    audit.append(approval_id="apr_other", decision="deny", by="telegram:42")
    service = TaskService(state, TasksConfig())
    task = service.create("water the plants")
    service.close()
    tasks = TaskDatabase(tasks_db_path(state))
    with tasks.write():
        for attempt in (1, 2):
            tasks.conn.execute("insert into task_runs (task_id, occurrence_at, attempt, status, started_at) "
                               "values (?, 1000, ?, 'failed', 1000)", [task.id, attempt])
    with tasks.write():
        gone = tasks.conn.execute("select max(id) from task_runs").fetchone()[0]
        tasks.conn.execute("delete from task_runs where id = ?", [gone])
    tasks.close()
    webhooks = WebhookDeliveries(state)
    assert webhooks.claim("github", ("delivery-1", "sig-1"), 2e9, 1000.0) is None
    assert webhooks.begin_key("github", "idem-1", "sha256:abc", 1712345678.123456) is None
    webhooks.close()
    telegram = DeliveryStore.of_state_dir(state, lambda: 111)
    telegram.record("report", 42, "the report <b>", True, session_id="s-1")
    telegram.mark_attempting(telegram.record("reply", 42, "mid-send", False).id, 1)  # its sender is copied
    telegram.approval_opened("tok-1", 42)
    for bot in (111, 222):  # two bots whose update ids collide: both rows move
        telegram.mark_handled(bot, 9, "turn")
        telegram.save_offset(bot, 10)
    telegram.close()
    DriftFile(state).replace({"github": {"approved": {"search": "sha256:1"}, "drifted": {"x": {"n": 1.5}}}})
    return {"approval": approval.id, "task": task.id, "run_gone": gone}


def _tables(result: Any) -> dict[str, tuple[int, str]]:
    return {t["table"]: (t["rows"], t["sha256"]) for t in json.loads(result.stdout)["tables"]}


def _cli_on(state: Path, url: str, password: str, *args: str) -> Any:
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({"storage": {"url": url}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={password}\n")
    done = run_cli(["--state-dir", str(state), *args], env={"ATOMIC_AGENT_STATE_DIR": ""}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_migrate_copies_every_plugins_state_and_back_with_identical_digests(tmp_path: Path, postgresql_database: Any):
    from tests.plugins.postgresql.pg_kit import raw

    server, name = postgresql_database
    url = server.url(name)
    state = tmp_path / "state"
    _embedded_state(state)
    facts = _plugins_state(state)
    result = _migrate(state, url, server.password)
    assert result.returncode == 0, result.stderr
    into = _tables(result)
    assert {t: n for t, (n, _) in into.items() if n} == {
        "sessions": 1, "transcript": 4, "turns": 2, "turn_audit": into["turn_audit"][0], "steer_queue": 1,
        "idempotency_keys": 1, "approval_records": 1, "approval_audit": 2, "tasks": 1, "task_runs": 1,
        "webhook_seen": 2, "webhook_idempotency": 1, "telegram_deliveries": 2, "telegram_approval_requests": 1,
        "telegram_handled_updates": 2, "telegram_offsets": 2,
        "mcp_tool_approvals": 1}
    # a runtime-less command of a host on the database sees the copied approvals and tasks
    host = tmp_path / "host-b"
    listed = json.loads(_cli_on(host, url, server.password, "approvals", "list", "--all", "--json").stdout)
    assert [a["approvalId"] for a in listed] == [facts["approval"]]
    assert [t["id"] for t in json.loads(_cli_on(host, url, server.password, "task", "list", "--json").stdout)] \
        == [facts["task"]]
    with raw(postgresql_database) as pg:  # ids continue past the deleted run's, and past the audit's
        run = pg.execute("insert into task_runs (task_id, occurrence_at, attempt, status) "
                         "values ('t', 1, 1, 'skipped') returning id").fetchone()[0]
        assert run == facts["run_gone"] + 1
        assert pg.execute("select formatted from telegram_deliveries order by id").fetchone()[0] is True
        assert pg.execute("select count(*) from telegram_deliveries where sender is not null").fetchone()[0] == 1
        assert pg.execute("select distinct bot_id from telegram_deliveries").fetchall() == [(111,)]  # whose they are
    back = tmp_path / "back"
    home = _cli_on(back, url, server.password, "storage", "migrate", "--to", "sqlite", "--json")
    returned = _tables(home)
    returned["task_runs"] = into["task_runs"]  # the run inserted above is in the database, not the source
    assert returned == into  # every table: the same rows, by count and sha256
    assert (back / "audit" / "approvals.ndjson").read_text().count("\n") == 2
    again = run_cli(["--state-dir", str(back), "storage", "migrate", "--to", "sqlite"],
                    env={"ATOMIC_AGENT_STATE_DIR": ""})
    assert again.returncode != 0 and "not empty" in again.stderr


def test_a_table_that_does_not_verify_keeps_nothing(tmp_path: Path, postgresql_database: Any):
    """A copy whose tasks read back different (a changed form) is rolled back whole: the
    sessions copied before it are not in the database either."""
    import attrs
    import pytest

    from atomic_agent.plugins.postgresql.core_shared_state import core_shared_state
    from atomic_agent.plugins.postgresql.pg_schema import Step, migrate
    from atomic_agent.plugins.postgresql.state_copy import StateCopyError, copy_into_postgresql
    from atomic_agent.plugins.tasks.task_shared_state import TasksState
    from atomic_agent.turns import session_backend_kit
    from tests.plugins.postgresql.pg_kit import raw

    state = tmp_path / "state"
    _embedded_state(state)
    _plugins_state(state)
    garbled = attrs.evolve(TasksState(), forms={"tasks.message": ("message || '!'", "%s", "message", "?")})
    with raw(postgresql_database) as pg:
        migrate(pg, "test")
        migrate(pg, "test", [Step(n, tuple(sql)) for n, sql in garbled.schema_steps], garbled.owner)
        with pytest.raises(StateCopyError, match="tasks did not verify"):
            copy_into_postgresql([*core_shared_state(session_backend_kit), garbled], state, pg)
        assert pg.execute("select count(*) from sessions").fetchone()[0] == 0
        assert pg.execute("select count(*) from tasks").fetchone()[0] == 0
