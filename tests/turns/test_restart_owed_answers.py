"""A restarted agent answers what it owes, once: decided by the last durable record of each
conversation (a consumed message, a tool result or a failure note is owed; a reply, a
compaction or a turn the user stopped is not), answered by a continuation turn that has
no user text of its own and runs the loop on the durable conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.sessions.compact_session import commit_compaction, take_snapshot
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, TURN_FINISHED, TURN_STARTED, USER, TranscriptEntry
from atomic_agent.testing.scripted_provider import ScriptedProvider
from atomic_agent.turns.restart_recovery import owes_answer
from tests.agent.loop_harness import ToolLog, make_runtime
from tests.turns.turn_kit import answering, answering_provider, play_dead, replies, users


async def _interrupted(tmp_path: Path, text: str = "hang on it") -> tuple[str, asyncio.Task[object]]:
    """A session whose turn was cut off by a dead process (its tool call still open), and
    that process's zombie task (bury it with `_bury` once recovery fenced it out)."""
    started = ToolLog()
    first = make_runtime(tmp_path, answering_provider(), started)
    sid = first.open_session(None, tmp_path).id
    zombie = asyncio.ensure_future(first.run_turn(text, session_id=sid))
    await started.running(text)
    play_dead(first)
    return sid, zombie


async def _bury(zombie: asyncio.Task[object]) -> None:
    zombie.cancel()
    await asyncio.gather(zombie, return_exceptions=True)


async def test_restart_answers_an_interrupted_message_once(tmp_path: Path):
    sid, zombie = await _interrupted(tmp_path)
    log = ToolLog()
    second = make_runtime(tmp_path, answering_provider(), log)
    report = await second.recover(resume=True)
    results = await asyncio.gather(*report.results)
    assert len(report.continued) == 1 and [r.reply for r in results] == ["re: hang on it"]
    continuation = second.lifecycle.ledger.get(report.continued[0])
    assert (continuation.origin, continuation.text, continuation.state) == ("recovery", "", "completed")
    assert users(second, sid) == ["hang on it"]  # the continuation adds no user message
    assert replies(second, sid) == ["re: hang on it"]
    assert log.started == []  # the interrupted non-durable call was settled, never re-run
    again = await second.recover(resume=True)
    assert (again.continued, again.results) == ((), ())  # answered: owed nothing more
    await _bury(zombie)
    assert replies(second, sid) == ["re: hang on it"]  # the zombie's late words never land
    await second.close()


async def test_restart_admits_one_continuation_even_when_recovery_itself_crashes(tmp_path: Path):
    sid, zombie = await _interrupted(tmp_path)
    second = make_runtime(tmp_path, answering_provider())
    report = await second.recover(resume=True)
    for future in report.results:  # died before the continuation ran: it is left queued
        future.cancel()
    await asyncio.gather(*report.results, return_exceptions=True)
    play_dead(second)

    third = make_runtime(tmp_path, answering_provider())
    report3 = await third.recover(resume=True)
    results = await asyncio.gather(*report3.results)
    assert report3.continued == () and report3.resumed == report.continued  # adopted, not admitted again
    assert [r.reply for r in results] == ["re: hang on it"]
    lane = third.lifecycle.ledger.lane(sid)
    assert [(t.origin, t.state) for t in lane] == [("cli", "interrupted"), ("recovery", "completed")]
    await _bury(zombie)
    await third.close()


async def test_restart_retries_a_failed_turn_with_its_failure_note_as_context(tmp_path: Path):
    first = make_runtime(tmp_path, ScriptedProvider([RuntimeError("model fell over")]))
    sid = first.open_session(None, tmp_path).id
    assert (await first.run_turn("what now", session_id=sid)).state == "failed"
    await first.close()

    provider = ScriptedProvider([], default=answering)  # type: ignore[arg-type]
    second = make_runtime(tmp_path, provider)
    report = await second.recover(resume=True)
    assert [r.reply for r in await asyncio.gather(*report.results)] == ["re: what now"]
    assert "system: The last turn failed" in provider.requests[0].prompt
    await second.close()


async def test_restart_does_not_answer_a_compaction(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    session = rt.open_session(None, tmp_path)
    # a turn that failed (owed), then a compaction replaced it: a replacement is not a question
    rt.sessions.append(session, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="old question"),
                                 TranscriptEntry(FAILURE_NOTE, 0, text="The last turn failed: x"),
                                 TranscriptEntry(TURN_FINISHED, 0, status="failed", reason="model")])
    assert owes_answer(rt.sessions, session.id)
    snapshot = take_snapshot(rt.sessions, session.id)
    assert snapshot is not None
    commit_compaction(rt.sessions, snapshot, "summary of the old question")
    report = await rt.recover(resume=True)
    assert (report.continued, report.results) == ((), ())
    await rt.close()


async def test_restart_answers_a_message_kept_after_a_compaction(tmp_path: Path):
    rt = make_runtime(tmp_path, answering_provider())
    session = rt.open_session(None, tmp_path)
    rt.sessions.append(session, [TranscriptEntry(TURN_STARTED, 0), TranscriptEntry(USER, 0, text="first")])
    snapshot = take_snapshot(rt.sessions, session.id)
    assert snapshot is not None
    # joined after the snapshot: the compaction keeps it, and it is still owed its answer
    rt.sessions.append(session, [TranscriptEntry(USER, 0, text="kept message")])
    commit_compaction(rt.sessions, snapshot, "summary")
    report = await rt.recover(resume=True)
    assert [r.reply for r in await asyncio.gather(*report.results)] == ["re: kept message"]
    await rt.close()


async def test_restart_does_not_answer_a_turn_the_user_stopped(tmp_path: Path):
    log = ToolLog()
    rt = make_runtime(tmp_path, answering_provider(), log)
    sid = rt.open_session(None, tmp_path).id
    turn = asyncio.ensure_future(rt.run_turn("hang until stopped", session_id=sid))
    await log.running("hang until stopped")
    assert rt.stop(sid)
    assert (await turn).state == "stopped"
    report = await rt.recover(resume=True)
    assert (report.continued, report.results) == ((), ())
    await rt.close()


async def test_one_shot_recovery_owes_but_does_not_answer(tmp_path: Path):
    sid, zombie = await _interrupted(tmp_path)
    rt = make_runtime(tmp_path, answering_provider())
    report = await rt.recover(resume=False)  # a `run` beside nothing long-running: no continuation
    assert (report.continued, report.results) == ((), ())
    assert owes_answer(rt.sessions, sid)
    await _bury(zombie)
    await rt.close()
