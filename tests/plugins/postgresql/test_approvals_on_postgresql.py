"""Approvals and questions on the fleet's PostgreSQL: what one host commits every other host
answers and sees (a waiter on host B wakes on host A's answer; two runtimes share one set of
records), the approval audit is append-only in the database itself with ids never reused,
and `atomic-agent approvals list|answer` on a host with storage.url works on the fleet's
records. The records' behaviour on both backends is tests/approval/test_approval_records.py."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import psycopg
import pytest

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.approval.approval_records import APPROVAL, APPROVED, OPERATOR, PENDING, FrozenCall
from atomic_agent.approval.approval_repository import ApprovalRepository
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.testing.runtime_kit import boot_for_test
from tests.plugins.postgresql.pg_kit import backend_on, raw


def _ask(records: ApprovalRepository, ttl_s: float = 60.0) -> Any:
    return records.create(kind=APPROVAL, session_id="s1", category="shell", level=1, summary="make",
                          frozen=FrozenCall("os.shell", '{"command":"make"}', "/work"), ttl_s=ttl_s, call_key="s1/0/1/0")


async def test_a_waiter_on_one_host_wakes_on_an_answer_given_on_another(postgresql_database: Any) -> None:
    host_a, host_b = backend_on(postgresql_database), backend_on(postgresql_database)
    try:
        record = _ask(host_b.approvals())
        waiting = asyncio.ensure_future(host_b.approvals().wait(record.id, poll_s=0.05))
        await asyncio.sleep(0.2)
        assert not waiting.done()
        host_a.approvals().answer(record.id, "once", principal=OPERATOR, surface="telegram")
        seen = await asyncio.wait_for(waiting, 30)  # a hung-test limit
        assert (seen.state, seen.surface) == (APPROVED, "telegram")
        assert [host_a.approvals().consume(record.id), host_b.approvals().consume(record.id)] == [True, False]
    finally:
        host_a.close()
        host_b.close()


async def test_a_waiter_is_woken_by_expiry_on_the_databases_clock(postgresql_database: Any) -> None:
    backend = backend_on(postgresql_database)
    try:
        record = _ask(backend.approvals(), ttl_s=0.3)
        with raw(postgresql_database) as conn:
            db_now = conn.execute("select extract(epoch from clock_timestamp())::float8").fetchone()[0]
        assert abs(record.created_at - db_now) < 5  # the record's times are the database's
        settled = await asyncio.wait_for(backend.approvals().wait(record.id, poll_s=0.05), 5)
        assert settled.state == "expired"
    finally:
        backend.close()


def test_the_approval_audit_is_append_only_in_the_database_with_ids_never_reused(postgresql_database: Any) -> None:
    backend = backend_on(postgresql_database)
    try:
        audit = backend.approval_audit()
        audit.append(sessionId="s1", tool="os.shell", reason="asked", who="nobody", summary="rm\x1b[31m -rf")
        audit.append(sessionId="s1", tool="os.shell", reason="user", who="user", approved=True)
        read = audit.read()
        assert [(e["reason"], e["who"]) for e in read] == [("asked", "nobody"), ("user", "user")]
        assert "\x1b" not in read[0]["summary"] and read[0]["ts"].endswith("+00:00")  # cleaned like the file's
        with raw(postgresql_database) as conn:
            for statement in ("update approval_audit set entry = '{}'", "delete from approval_audit",
                              "truncate approval_audit"):
                with pytest.raises(psycopg.errors.RaiseException, match="append-only"):
                    conn.execute(statement)
            ids = [r[0] for r in conn.execute("select audit_id from approval_audit order by audit_id").fetchall()]
            with pytest.raises(psycopg.errors.GeneratedAlways):
                conn.execute("insert into approval_audit (audit_id, entry) values (1, '{}')")
        assert ids == [1, 2] and len(audit.read()) == 2
    finally:
        backend.close()


def _gated_runtime(state: Path, postgresql_database: Any, ask: Any, log: Any, provider: Any) -> Runtime:
    from tests.agent.loop_harness import TestToolsPlugin

    server, name = postgresql_database
    env = {"ATOMIC_AGENT_STORAGE_PASSWORD": server.password}
    ctx = boot_for_test(state, plugins={"test_tools": TestToolsPlugin(log), "postgresql": postgresql_plugin},
                        config={"storage": {"url": server.url(name)}}, environ=env)
    return Runtime(ctx, provider=provider, ask=ask, environ=env)


async def test_a_turn_waiting_on_host_a_is_answered_by_host_b_through_the_fleets_records(
        tmp_path: Path, postgresql_database: Any) -> None:
    from atomic_agent.approval.pending_approvals import PendingApprovals
    from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
    from tests.agent.loop_harness import ToolLog, until

    shown = PendingApprovals(lambda _e, _t: None, 60.0, lambda: None)  # host A's screen: nobody answers there
    log = ToolLog()
    host_a = _gated_runtime(tmp_path / "host-a", postgresql_database, shown.ask, log, ScriptedProvider(
        [calls(("t.gated", {"path": "ls"}))], default=calls(("reply", {"text": "done"}))))
    shown.records = host_a.gate.records
    host_b = _gated_runtime(tmp_path / "host-b", postgresql_database, None, log, ScriptedProvider([]))
    try:
        sid = host_a.open_session(None, tmp_path).id
        turn = asyncio.ensure_future(host_a.run_turn("run ls", session_id=sid))
        await until(lambda: bool(shown.pending()))
        approval_id = str(shown.pending()[0]["approvalId"])
        (listed,) = host_b.gate.records.find((PENDING,))  # type: ignore[union-attr]
        assert listed.id == approval_id and listed.session_id == sid
        host_b.gate.records.answer(approval_id, "once", principal=OPERATOR, surface="cli")  # type: ignore[union-attr]
        answered = await asyncio.wait_for(turn, 15)
        assert (answered.status, answered.reply) == ("done", "done")
        assert [r.text for r in host_a.sessions.entries(sid) if r.kind == "tool_result"] == ["ran"]
        assert host_b.gate.records.get(approval_id).used_at is not None  # type: ignore[union-attr]
        audit = host_b.gate.audit.read()  # type: ignore[union-attr]
        assert [e["reason"] for e in audit if e.get("approvalId") == approval_id] == ["asked", "user"]
    finally:
        await host_a.close()
        await host_b.close()
    for host in ("host-a", "host-b"):  # nothing went to the embedded files
        assert not (tmp_path / host / "approvals.sqlite").exists()
        assert not (tmp_path / host / "audit" / "approvals.ndjson").exists()


def test_approvals_list_and_answer_on_a_host_with_storage_url_use_the_fleets_records(
        tmp_path: Path, postgresql_database: Any) -> None:
    from tests.cli.run_cli import run_cli

    server, name = postgresql_database
    backend = backend_on(postgresql_database)
    try:
        record = _ask(backend.approvals())
    finally:
        backend.close()
    state = tmp_path / "host-b"
    state.mkdir()
    quiet = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}
    (state / "config.json").write_text(json.dumps({**quiet, "storage": {"url": server.url(name)}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={server.password}\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATOMIC_AGENT_")}

    def cli(*args: str) -> Any:
        return run_cli(["--state-dir", str(state), "approvals", *args], env=env, timeout=120)

    listed = cli("list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [r["approvalId"] for r in json.loads(listed.stdout)] == [record.id]
    answered = cli("answer", record.id, "once")
    assert answered.returncode == 0 and "approved (once)" in answered.stdout, answered.stderr
    late = cli("answer", record.id, "deny")
    assert late.returncode != 0 and "already answered 'once' by operator via cli" in late.stderr
    assert json.loads(cli("list", "--json").stdout) == []
    assert not (state / "approvals.sqlite").exists()
