"""A steer handed back at its turn's end stays in steer_queue (marked with the turn) until its
caller re-sends it (deleted by that admission, in the same transaction), dismisses it, or —
when no caller can take it — it becomes a queued turn of its lane."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.durable_steering import SteerAlreadyTakenError
from tests.agent.loop_harness import make_runtime
from tests.turns.turn_kit import answering, answering_provider, play_dead, users


def queued(path: Path) -> list[tuple[str, str | None]]:
    with sqlite3.connect(path) as other:  # only what was committed
        return [tuple(r) for r in other.execute("select text, handed_back from steer_queue order by steer_id")]


def turn_count(path: Path) -> int:
    with sqlite3.connect(path) as other:
        return other.execute("select count(*) from turns").fetchone()[0]


def steering_late(holder: dict[str, Any], text: str) -> ScriptedProvider:
    """Answers every turn; during the first inference of a turn whose user text starts with
    `late`, accepts `text` as a steer that arrives too late to be folded in."""
    def provider(request: Any) -> str:
        if "steered" not in holder and "user: late" in request.prompt:
            holder["steered"] = holder["rt"].steer(holder["sid"], text)
            return calls(("reply", {"text": "bye"}))
        return answering(request)

    return ScriptedProvider([], default=provider)  # type: ignore[arg-type]


async def test_a_handed_back_steer_survives_a_crash_before_its_caller_has_it(tmp_path: Path):
    holder: dict[str, Any] = {}
    first = make_runtime(tmp_path, steering_late(holder, "too late"))
    sid = first.open_session(None, tmp_path).id
    holder.update(rt=first, sid=sid)
    result = await first.run_turn("late start", session_id=sid)
    assert holder["steered"].steered and result.undelivered == ("too late",)
    assert queued(first.sessions.path) == [("too late", result.turn_id)]  # still on disk, marked
    play_dead(first)  # the process dies before its caller reads the result

    second = make_runtime(tmp_path, answering_provider())
    report = await second.recover(resume=True)
    assert len(report.steers_requeued) == 1
    for future in report.results:
        await future
    assert users(second, sid).count("too late") == 1 and queued(second.sessions.path) == []
    # the old caller's re-send, should it still come, is refused: answered exactly once
    with pytest.raises(SteerAlreadyTakenError):
        await second.run_turn("too late", session_id=sid, resend_steer_id=result.undelivered_ids[0])
    assert users(second, sid).count("too late") == 1
    await second.close()


async def test_a_resend_consumes_its_handed_back_steer_exactly_once(tmp_path: Path):
    holder: dict[str, Any] = {}
    rt = make_runtime(tmp_path, steering_late(holder, "again"))
    sid = rt.open_session(None, tmp_path).id
    holder.update(rt=rt, sid=sid)
    result = await rt.run_turn("late start", session_id=sid)
    (steer_id,) = result.undelivered_ids
    resent = await rt.run_turn("again", session_id=sid, resend_steer_id=steer_id)
    assert resent.status == "done" and queued(rt.sessions.path) == []
    turns = turn_count(rt.sessions.path)
    with pytest.raises(SteerAlreadyTakenError):  # a second copy admits nothing
        await rt.run_turn("again", session_id=sid, resend_steer_id=steer_id)
    assert turn_count(rt.sessions.path) == turns and users(rt, sid).count("again") == 1
    assert not rt.dismiss_steer(steer_id)
    await rt.close()


async def test_a_turn_run_with_no_caller_requeues_its_handed_back_steers(tmp_path: Path):
    first = make_runtime(tmp_path, answering_provider())
    sid = first.open_session(None, tmp_path).id
    first.lifecycle.admit(sid, "late and left queued", "cli")  # admitted, never started: then it died
    play_dead(first)

    holder: dict[str, Any] = {}
    second = make_runtime(tmp_path, steering_late(holder, "nobody took me"))
    holder.update(rt=second, sid=sid)
    report = await second.recover(resume=True)
    results = [await future for future in report.results]
    assert holder["steered"].steered
    assert [r.undelivered for r in results] == [()]  # nobody to hand it to: it became a turn
    assert users(second, sid) == ["late and left queued", "nobody took me"]
    assert queued(second.sessions.path) == []
    await second.close()
