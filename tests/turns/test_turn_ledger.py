"""The admission ledger through the runtime: durable before announced, cancelled-while-waiting
never runs, sendMode all. Its storage contract (admission order across reopens, the audit
append-only, final states frozen) is checked for every backend by
tests/sessions/test_session_database_conformance_turns.py."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path

import pytest

from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_file import load_config
from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.turns.turn_controller import SubmissionCancelledError
from tests.agent.loop_harness import ToolLog, make_runtime, until
from tests.turns.turn_kit import answering_provider, users


async def test_admission_is_on_disk_before_turn_queued_is_announced(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    seen: list[tuple] = []

    def sink(event: dict) -> None:
        if event["type"] == "turn_queued":  # read through another connection: only committed data
            with sqlite3.connect(rt.sessions.path) as other:
                seen.append(other.execute("select state, text from turns where turn_id = ?",
                                          [event["turnId"]]).fetchone())

    await rt.run_turn("remember me", session_id=sid, on_event=sink)
    assert seen == [("queued", "remember me")]
    await rt.close()


async def test_a_submission_cancelled_while_waiting_ends_cancelled_without_running(tmp_path: Path):
    log = ToolLog()
    release = log.hold("slow first")
    rt = make_runtime(tmp_path, answering_provider(), log)
    sid = rt.open_session(None, tmp_path).id
    running = asyncio.ensure_future(rt.run_turn("slow first", session_id=sid))
    await log.running("slow first")
    cancel = asyncio.Event()
    waiting = asyncio.ensure_future(rt.run_turn("never", session_id=sid, cancelled=cancel))
    await until(lambda: len(rt.lifecycle.ledger.lane(sid)) == 2)  # admitted, waiting behind the first
    cancel.set()
    with pytest.raises(SubmissionCancelledError):
        await waiting
    release.set()
    await running
    lane = rt.lifecycle.ledger.lane(sid)
    assert [(t.text, t.state) for t in lane] == [("slow first", "completed"), ("never", "cancelled")]
    assert users(rt, sid) == ["slow first"]
    await rt.close()


async def test_send_mode_all_folds_every_queued_send_into_the_next_turn(tmp_path: Path):
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "config.json").write_text(json.dumps({"version": CONFIG_VERSION,
                                                                "agent": {"sendMode": "all"}}))
    log = ToolLog()
    release = log.hold("slow first")
    rt = make_runtime(tmp_path, answering_provider(), log)
    assert rt.config.agent.send_mode == "all"
    sid = rt.open_session(None, tmp_path).id
    first = asyncio.ensure_future(rt.run_turn("slow first", session_id=sid))
    await log.running("slow first")  # the others are sent while the first runs
    rest = [asyncio.ensure_future(rt.run_turn(t, session_id=sid)) for t in ("b", "c", "d")]
    await until(lambda: len(rt.lifecycle.ledger.lane(sid)) == 4)
    release.set()
    results = await asyncio.gather(first, *rest)
    assert users(rt, sid) == ["slow first", "b", "c", "d"]  # joined in admission order
    host = results[1]
    assert host.state == "completed" and host.reply == "re: d"  # one response to all of them
    assert [(r.state, r.merged_into) for r in results[2:]] == [("merged", host.turn_id)] * 2
    assert all(r.reply == "re: d" for r in results[1:])  # every sender hears the one answer
    await rt.close()


def test_send_mode_is_validated(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "agent": {"sendMode": "some"}}))
    with pytest.raises(ConfigError) as err:
        load_config(tmp_path, {}, environ={})
    assert "sendMode" in str(err.value) and "one-at-a-time" in str(err.value)
    (tmp_path / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "agent": {"sendMode": "all"}}))
    assert load_config(tmp_path, {}, environ={}).agent.send_mode == "all"


async def test_a_turn_start_reads_its_lane_by_index_however_long_the_session(tmp_path: Path):
    """Starting a turn looks for a running or older queued turn of its lane with index seeks on
    (lane, state, admitted_order): it never reads the lane's finished turns, whose number grows
    with the session (the one query with `state = ? or ...` read them all at every start)."""
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    for n in range(3):
        await rt.run_turn(f"turn {n}", session_id=sid)
    statements: list[str] = []
    rt.sessions.conn.set_trace_callback(statements.append)
    await rt.run_turn("traced", session_id=sid)
    rt.sessions.conn.set_trace_callback(None)
    lane_reads = [s for s in statements if s.lstrip().lower().startswith("select") and "from turns where lane" in s]
    assert lane_reads
    for sql in lane_reads:
        plan = " ".join(row[3] for row in rt.sessions.conn.execute("EXPLAIN QUERY PLAN " + sql))
        assert "state=?" in plan and "TEMP B-TREE" not in plan and "SCAN" not in plan, (sql, plan)
    await rt.close()
