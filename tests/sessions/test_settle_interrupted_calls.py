"""After a crash mid-batch only durable tools run again; every other call settles as an
interrupted error; results land beside their calls in call order, each call answered once."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.hook_records import ToolResult
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.settle_interrupted_calls import settle_interrupted_calls
from atomic_agent.sessions.transcript_entry import TOOL_CALL, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.sessions.unanswered_calls import unanswered_calls
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.tools.tool_registry import ToolRegistry
from tests.agent.loop_harness import until
from tests.sessions.crash_harness import CrashTools, crash, runtime_with

BATCH = calls(("c.read", {"path": "a"}), ("c.write", {"path": "b"}))


async def _crashed_mid_batch(tmp_path: Path) -> tuple[CrashTools, str]:
    tools = CrashTools()
    dead = runtime_with(tmp_path, ScriptedProvider([BATCH]), tools)
    session = dead.open_session(None, tmp_path)
    task = asyncio.ensure_future(dead.run_turn("go", session_id=session.id))
    await until(lambda: len(tools.runs) == 2)  # both calls are running
    await crash(dead, task)
    return tools, session.id


async def test_crash_mid_batch_reruns_only_durable_tools_and_settles_others_as_interrupted(tmp_path: Path):
    tools, sid = await _crashed_mid_batch(tmp_path)
    assert tools.runs == {"c.read": 1, "c.write": 1}
    tools.hang = False
    rt = runtime_with(tmp_path, ScriptedProvider(), tools)
    await rt.recover()  # marks the dead turn interrupted, then settles its calls (settle_interrupted_calls)
    report = await rt.settle_interrupted(sid)  # a second settle finds nothing owed
    entries = rt.sessions.load(sid).entries
    kinds = [e.kind for e in entries]
    assert kinds[2:6] == ["assistant_tool_call", "assistant_tool_call", "tool_result", "tool_result"]
    read, write = entries[4], entries[5]
    assert (read.tool, read.status, read.batch_index) == ("c.read", "ok", 0) and read.text == "c.read a run 2"
    assert (write.tool, write.status, write.batch_index) == ("c.write", "error", 1)
    assert "interrupted by a restart" in write.text and "not run again" in write.text
    assert tools.runs == {"c.read": 2, "c.write": 1}
    assert report.settled == 0
    assert unanswered_calls(entries) == []
    await rt.close()


async def test_non_durable_tool_never_runs_twice(tmp_path: Path):
    tools, sid = await _crashed_mid_batch(tmp_path)
    tools.hang = False
    for _ in range(2):  # a second restart finds nothing owed and runs nothing
        rt = runtime_with(tmp_path, ScriptedProvider(), tools)
        await rt.recover()
        await rt.settle_interrupted(sid)
        await rt.close()
    assert tools.runs["c.write"] == 1
    rt = runtime_with(tmp_path, ScriptedProvider(), tools)
    results = [e for e in rt.sessions.load(sid).entries if e.kind == "tool_result"]
    assert [(r.tool, r.batch_index) for r in results] == [("c.read", 0), ("c.write", 1)]  # each answered once
    await rt.close()


async def test_settled_session_continues_with_the_results_in_the_prompt(tmp_path: Path):
    tools, sid = await _crashed_mid_batch(tmp_path)
    tools.hang = False
    provider = ScriptedProvider([calls(("reply", {"text": "ok"}))])
    rt = runtime_with(tmp_path, provider, tools)
    await rt.recover()
    await rt.run_turn("and now?", session_id=sid)
    prompt = provider.requests[0].prompt
    assert 'assistant_tool_call: c.write {"path":"b"}\ntool_result[c.write error]: c.write was interrupted' in prompt
    await rt.close()


def _owed(tmp_path: Path) -> tuple[SessionStore, SessionState]:
    store = SessionStore(tmp_path)
    state = store.create(tmp_path)
    store.append(state, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="go"),
                         TranscriptEntry(TOOL_CALL, 0, tool="c.read", args={"path": "a"}, step=0, batch_index=0),
                         TranscriptEntry(TOOL_CALL, 0, tool="c.write", args={"path": "b"}, step=0, batch_index=1)])
    return store, state


async def test_settle_reruns_durable_calls_through_the_given_runner(tmp_path: Path):
    store, state = _owed(tmp_path)
    registry = ToolRegistry(CrashTools().register_tools(None))
    asked: list[str] = []

    async def run_durable(call: TranscriptEntry) -> ToolResult:
        asked.append(call.tool or "")
        return ToolResult.ok("fresh read")

    report = await settle_interrupted_calls(store, state, registry, run_durable)
    assert asked == ["c.read"] and report.settled == 2
    results = [(e.tool, e.status, e.text) for e in store.load(state.id).entries if e.kind == "tool_result"]
    assert results[0] == ("c.read", "ok", "fresh read") and results[1][:2] == ("c.write", "error")
    store.close()


async def test_calls_of_a_turn_still_running_elsewhere_are_never_settled_or_repaired(tmp_path: Path):
    store, state = _owed(tmp_path)
    store.append(state, [TranscriptEntry(TURN_STARTED, 1), TranscriptEntry(USER, 1, text="another owner's turn")])
    store.conn.execute("insert into turns (turn_id, session_id, lane, admitted_order, state, origin, text, turn_index, "
                     "admitted_at) values ('t0', ?, ?, 1, 'running', 'cli', 'go', 0, '')", [state.id, state.id])
    before = store.entries(state.id)
    assert store.load(state.id).entries == before  # not stranded: a live owner is still answering
    report = await settle_interrupted_calls(store, state, ToolRegistry(CrashTools().register_tools(None)),
                                            lambda call: None)  # type: ignore[arg-type,return-value]
    assert report.settled == 0 and store.entries(state.id) == before
    store.close()
