"""Mid-turn steering: accepted only while a running turn can pick it up, folded in at the
next step as a real user message, notice after the loop detector's, capped, never lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from atomic_agent.turns.steering_inbox import MAX_PENDING_STEERS, SteeringInbox, SteerOutcome
from tests.agent.loop_harness import ToolLog, make_runtime, until


def test_steer_is_refused_when_no_turn_is_running():
    inbox = SteeringInbox()
    assert inbox.push("s", "hello") is SteerOutcome.NO_RUNNING_TURN


def test_inbox_caps_pending_steers_without_evicting():
    inbox = SteeringInbox()
    inbox.open("s")
    for i in range(MAX_PENDING_STEERS):
        assert inbox.push("s", f"m{i}").steered
    assert inbox.push("s", "one too many") is SteerOutcome.FULL
    assert [text for _, text in inbox.close_and_hand_back("s")] == [f"m{i}" for i in range(MAX_PENDING_STEERS)]


def test_one_megabyte_steer_gets_a_clear_refusal():
    inbox = SteeringInbox()
    inbox.open("s")
    assert inbox.push("s", "x" * 1_000_000) is SteerOutcome.TOO_LARGE


def test_close_and_drain_shuts_the_window_in_the_same_call():
    inbox = SteeringInbox()
    inbox.open("s")
    inbox.push("s", "late")
    assert [text for _, text in inbox.close_and_hand_back("s")] == ["late"]
    assert inbox.push("s", "after") is SteerOutcome.NO_RUNNING_TURN


async def test_steer_lands_at_the_next_step_as_a_user_turn_with_notice(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))])
    log = ToolLog()
    release = log.hold("a")
    rt = make_runtime(tmp_path, provider, log)
    session = rt.open_session(None, tmp_path)
    events: list[dict] = []
    task = asyncio.ensure_future(rt.run_turn("start", session_id=session.id, on_event=events.append))
    await log.running("a")  # the first step's tool is running
    assert rt.steer(session.id, "no, do X instead") is SteerOutcome.ACCEPTED
    release.set()
    result = await task
    assert result.undelivered == ()
    applied = [e for e in events if e["type"] == "steer_applied"]
    assert applied == [{"type": "steer_applied", "sessionId": session.id, "turnIndex": 0, "stepIndex": 1,
                        "text": "no, do X instead"}]
    second_prompt = provider.requests[1].prompt
    assert "user: no, do X instead" in second_prompt
    assert second_prompt.index("### notice") > second_prompt.index("user: no, do X instead")
    users = [e.text for e in rt.sessions.load(session.id).entries if e.kind == "user"]
    assert users == ["start", "no, do X instead"]
    await rt.close()


async def test_steer_after_the_final_drain_comes_back_undelivered(tmp_path: Path):
    rt_holder: dict = {}

    def reply_and_steer(request):
        # arrives during the last inference: after the step's drain, before the turn closes
        rt_holder["outcome"] = rt_holder["rt"].steer(rt_holder["sid"], "too late")
        return calls(("reply", {"text": "bye"}))

    provider = ScriptedProvider([reply_and_steer])
    rt = make_runtime(tmp_path, provider)
    session = rt.open_session(None, tmp_path)
    rt_holder.update(rt=rt, sid=session.id)
    events: list[dict] = []
    result = await rt.run_turn("hi", session_id=session.id, on_event=events.append)
    assert rt_holder["outcome"] is SteerOutcome.ACCEPTED
    assert result.undelivered == ("too late",)
    assert any(e["type"] == "steer_undelivered" and e["text"] == "too late" for e in events)
    await rt.close()


async def test_three_sessions_run_concurrently_while_same_session_follow_up_queues_fifo(tmp_path: Path):
    log = ToolLog()
    release = log.hold("x")
    provider = ScriptedProvider([], default=calls(("t.read", {"path": "x"}), ("reply", {"text": "ok"})))
    rt = make_runtime(tmp_path, provider, log)
    ids = [rt.open_session(None, tmp_path).id for _ in range(3)]
    queued: list[dict] = []
    runs = [rt.run_turn(f"task {i}", session_id=sid) for i, sid in enumerate(ids)]
    follow_up = rt.run_turn("follow-up", session_id=ids[0], on_event=queued.append)
    everything = asyncio.gather(*runs, follow_up)
    await until(lambda: len(log.started) == 3)  # no tool ends before all three sessions' have started
    release.set()
    results = await everything
    assert all(r.status == "done" for r in results)
    assert next(e for e in queued if e["type"] == "turn_queued")["position"] == 1
    assert results[3].turn_index == 1  # the follow-up ran after the first turn on that session
    starts = sorted(t for _, _, t in log.started)
    ends = sorted(t for _, _, t in log.finished)
    assert starts[2] < ends[0]  # the three sessions' tools overlapped
    assert starts[3] >= ends[0]  # the follow-up waited for its session's first turn
    await rt.close()
