"""Compaction replaces history up to a store-taken boundary in one transaction, keeps what
joined after the snapshot, is shared by concurrent callers, and on failure changes nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from atomic_agent.llm.provider_protocol import ProviderError
from atomic_agent.sessions.compact_session import CompactionError
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.transcript_entry import USER, TranscriptEntry
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import ToolLog, make_runtime, until
from tests.sessions.crash_harness import raw_transcript

SUMMARY = "The user asked to read a; it said 'contents of a'."


async def _runtime_with_history(tmp_path: Path, script: list) -> tuple:  # type: ignore[type-arg]
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "read it"})), *script])
    rt = make_runtime(tmp_path, provider)
    result = await rt.run_turn("read a", working_dir=tmp_path)
    return rt, provider, result.session_id


async def test_compaction_replaces_history_with_one_summary_row(tmp_path: Path):
    rt, provider, sid = await _runtime_with_history(tmp_path, [SUMMARY])
    before = rt.sessions.load(sid).entries
    result = await rt.compact(sid)
    entries = rt.sessions.load(sid).entries
    assert result.compacted and result.replaced_rows == len(before) and result.kept_rows == 0
    assert [(e.kind, e.text, e.seq) for e in entries] == [("compaction", SUMMARY, before[-1].seq)]
    request = provider.requests[-1]
    assert request.grammar is None and "user: read a" in request.prompt and "### summary" in request.prompt
    await rt.close()


async def test_compaction_keeps_rows_that_joined_after_the_snapshot(tmp_path: Path):
    def summarise_while_another_owner_writes(request):  # type: ignore[no-untyped-def]
        other = SessionStore(rt.state_dir)  # another owner of the same database
        other.append(other.load(sid), [TranscriptEntry(USER, 5, text="joined during the summary")])
        other.close()
        return SUMMARY

    rt, _, sid = await _runtime_with_history(tmp_path, [summarise_while_another_owner_writes])
    boundary = rt.sessions.load(sid).entries[-1].seq
    result = await rt.compact(sid)
    entries = rt.sessions.load(sid).entries
    assert [(e.kind, e.text) for e in entries] == [("compaction", SUMMARY), ("user", "joined during the summary")]
    assert result.boundary_seq == boundary and result.kept_rows == 1
    assert entries[1].seq == boundary + 1  # the late row kept its place
    await rt.close()


async def test_concurrent_compact_callers_share_one_compaction(tmp_path: Path):
    rt, provider, sid = await _runtime_with_history(tmp_path, [SUMMARY, "a second summary nobody asked for"])
    asked = len(provider.requests)
    first, second, third = await asyncio.gather(rt.compact(sid), rt.compact(sid), rt.compact(sid))
    assert first is second is third
    assert len(provider.requests) == asked + 1
    assert [e.kind for e in rt.sessions.load(sid).entries] == ["compaction"]
    await rt.close()


async def test_compaction_failure_leaves_history_byte_identical(tmp_path: Path):
    rt, _, sid = await _runtime_with_history(tmp_path, [ProviderError("upstream 503", status=503)])
    before = raw_transcript(rt, sid)
    with pytest.raises(CompactionError, match="history is unchanged"):
        await rt.compact(sid)
    assert raw_transcript(rt, sid) == before
    await rt.close()


async def test_compaction_waits_for_the_running_turn(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "done"})),
                                 SUMMARY])
    log = ToolLog()
    release = log.hold("a")
    rt = make_runtime(tmp_path, provider, log)
    session = rt.open_session(None, tmp_path)
    turn = asyncio.ensure_future(rt.run_turn("read a", session_id=session.id))
    await log.running("a")
    compaction = asyncio.ensure_future(rt.compact(session.id))
    await until(lambda: rt.turns.queue_position(session.id) == 2)  # queued behind the running turn
    release.set()
    result = await compaction
    assert turn.done() and (await turn).reply == "done"
    assert [e.kind for e in rt.sessions.load(session.id).entries] == ["compaction"]
    assert result.replaced_rows > 0
    await rt.close()


async def test_next_turn_sees_the_summary_as_earlier_conversation(tmp_path: Path):
    rt, provider, sid = await _runtime_with_history(tmp_path, [SUMMARY, calls(("reply", {"text": "ok"}))])
    await rt.compact(sid)
    result = await rt.run_turn("what did I ask?", session_id=sid)
    prompt = provider.requests[-1].prompt
    assert f"### earlier-conversation\n{SUMMARY}\n### conversation\nuser: what did I ask?" in prompt
    assert "user: read a" not in prompt
    assert result.turn_index == 1  # numbering continues past the compacted turns
    await rt.close()


async def test_compacting_an_empty_session_asks_nothing(tmp_path: Path):
    provider = ScriptedProvider()
    rt = make_runtime(tmp_path, provider)
    session = rt.open_session(None, tmp_path)
    result = await rt.compact(session.id)
    assert not result.compacted and provider.requests == []
    await rt.close()


async def test_close_rejects_a_compaction_nobody_will_run(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.hang", {"path": "x"}))])
    rt = make_runtime(tmp_path, provider)
    session = rt.open_session(None, tmp_path)
    turn = asyncio.ensure_future(rt.run_turn("hang", session_id=session.id))
    await until(lambda: rt.turns.queue_position(session.id) == 1)
    waiting = asyncio.ensure_future(rt.compact(session.id))  # queued behind the hanging turn
    await until(lambda: rt.turns.queue_position(session.id) == 2)
    before = raw_transcript(rt, session.id)
    rt.compactor.cancel_all()
    with pytest.raises(CompactionError, match="runtime closed"):
        await waiting
    assert raw_transcript(rt, session.id) == before
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)
    await rt.close()
