"""send_message answers at once and the turn's events follow, in order, tagged with the turn id;
same-session turns queue FIFO (visibly), failures carry their category, abort cancels."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.api import ProviderUnavailableError
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import ToolLog, until
from tests.plugins.sidecar.sidecar_harness import SidecarHarness


async def test_send_message_answers_before_any_turn_event(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "hi"}))])
    sidecar = SidecarHarness(tmp_path, provider)
    session = (await sidecar.ok("create_session"))["session"]
    result = await sidecar.ok("send_message", sessionId=session["id"], text="hello")
    assert result["queuePosition"] == 0 and result["sessionId"] == session["id"]
    response_at = next(i for i, m in enumerate(sidecar.messages)
                       if m["type"] == "response" and m["request"] == "send_message")
    events = await sidecar.turn_done(result["turnId"])
    first_event_at = next(i for i, m in enumerate(sidecar.messages) if m["type"] == "event")
    assert response_at < first_event_at
    kinds = [e["type"] for e in events]
    assert kinds[:3] == ["turn_queued", "turn_started", "step_started"]
    assert "tool_call_started" in kinds and "tool_call_result" in kinds
    assert kinds[-2:] == ["assistant_reply", "turn_finished"]
    assert all(e["turnId"] == result["turnId"] and e["sessionId"] == session["id"] for e in events)
    started = next(e for e in events if e["type"] == "tool_call_started")
    assert "batchIndex" not in started and "batchSize" not in started  # a batch of one carries no position
    assert events[-1]["reason"] == "reply" and events[-1]["status"] == "done"
    await sidecar.close()


async def test_batch_position_is_forwarded_for_batches_of_two_or_more(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"}), ("t.read", {"path": "b"})),
                                 calls(("reply", {"text": "ok"}))])
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="two at once")
    events = await sidecar.turn_done(turn["turnId"])
    started = [e for e in events if e["type"] == "tool_call_started"]
    assert sorted((e["batchIndex"], e["batchSize"]) for e in started) == [(0, 2), (1, 2)]
    await sidecar.close()


async def test_send_message_without_session_creates_one_in_working_dir(tmp_path: Path):
    work = tmp_path / "work"
    work.mkdir()
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    turn = await sidecar.ok("send_message", text="hi", workingDir=str(work))
    await sidecar.turn_done(turn["turnId"])
    loaded = (await sidecar.ok("load_session", sessionId=turn["sessionId"]))["session"]
    assert loaded["workingDir"] == str(work.resolve()) and loaded["turns"] == 1
    assert [e["kind"] for e in loaded["entries"]][:2] == ["turn_started", "user"]
    bad = await sidecar.request("send_message", text="hi", workingDir=str(tmp_path / "missing"))
    assert bad["error"]["code"] == "invalid_request" and "not an existing directory" in bad["error"]["message"]
    await sidecar.close()


async def test_concurrent_messages_on_one_session_queue_fifo_visibly(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "one"})),
                                 calls(("reply", {"text": "two"})), calls(("reply", {"text": "three"}))])
    log = ToolLog()
    release = log.hold("slow")
    sidecar = SidecarHarness(tmp_path, provider, log=log)
    sid = (await sidecar.ok("create_session"))["session"]["id"]
    turns = [await sidecar.ok("send_message", sessionId=sid, text=f"m{i}") for i in range(3)]
    assert [t["queuePosition"] for t in turns] == [0, 1, 2]
    release.set()
    for t in turns:
        await sidecar.turn_done(t["turnId"])
    queued = [e["position"] for e in sidecar.events(kind="turn_queued")]
    assert queued == [0, 1, 2]
    replies = [e["text"] for e in sidecar.events(kind="assistant_reply")]
    assert replies == ["one", "two", "three"]
    started_order = [e["turnId"] for e in sidecar.events(kind="turn_started")]
    assert started_order == [t["turnId"] for t in turns]
    await sidecar.close()


async def test_a_failed_turn_reports_error_code_and_session_failed_category(tmp_path: Path):
    provider = ScriptedProvider([ProviderUnavailableError("connection refused")])
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="hi")
    events = await sidecar.turn_done(turn["turnId"])
    error = next(e for e in events if e["type"] == "error")
    assert error["code"] == "step_error:transport" and error["category"] == "transport"
    unavailable = next(e for e in events if e["type"] == "llm_unavailable")
    assert unavailable["mode"] == "scripted" and unavailable["hint"]
    failed = next(e for e in events if e["type"] == "session_failed")
    assert failed["category"] == "transport"
    assert next(e for e in events if e["type"] == "turn_finished")["status"] == "failed"
    assert not [e for e in events if e["type"] == "loop_failed"]
    # the session stays usable
    again = await sidecar.ok("send_message", sessionId=turn["sessionId"], text="again")
    assert (await sidecar.turn_done(again["turnId"]))[-1]["status"] == "done"
    await sidecar.close()


async def test_abort_cancels_the_running_turn_and_a_queued_one_never_runs(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "late"}))])
    log = ToolLog()
    log.hold("slow")  # never released: the abort ends it
    sidecar = SidecarHarness(tmp_path, provider, log=log)
    sid = (await sidecar.ok("create_session"))["session"]["id"]
    running = await sidecar.ok("send_message", sessionId=sid, text="long job")
    queued = await sidecar.ok("send_message", sessionId=sid, text="after")
    await sidecar.wait_for(lambda e: e["type"] == "tool_call_started")
    assert (await sidecar.ok("abort", sessionId=sid, turnId=queued["turnId"]))["aborted"] == [queued["turnId"]]
    assert (await sidecar.ok("abort", sessionId=sid))["aborted"] == [running["turnId"]]
    finished_running = (await sidecar.turn_done(running["turnId"]))[-1]
    assert finished_running["type"] == "turn_finished" and finished_running["status"] == "cancelled"
    finished_queued = (await sidecar.turn_done(queued["turnId"]))
    assert [e["type"] for e in finished_queued] == ["turn_queued", "turn_finished"]
    assert finished_queued[-1]["started"] is False
    assert (await sidecar.ok("abort", sessionId=sid))["aborted"] == []
    gone = await sidecar.request("abort", sessionId=sid, turnId=running["turnId"])
    assert gone["error"]["code"] == "turn_not_found"
    # in the ledger the running turn was a user stop, the queued one a withdrawal
    assert [(t.text, t.state) for t in sidecar.runtime.lifecycle.ledger.lane(sid)] == [("long job", "stopped"),
                                                                                       ("after", "cancelled")]
    await sidecar.close()


async def test_abort_stops_only_its_own_session(tmp_path: Path):
    provider = ScriptedProvider([], default=lambda request: (calls(("reply", {"text": "done"})) if "tool_result["
                                                             in request.prompt else calls(("t.read", {"path": "slow"}))))
    log = ToolLog()
    release = log.hold("slow")
    sidecar = SidecarHarness(tmp_path, provider, log=log)
    stopped = (await sidecar.ok("create_session"))["session"]["id"]
    other = (await sidecar.ok("create_session"))["session"]["id"]
    doomed = await sidecar.ok("send_message", sessionId=stopped, text="stop me")
    kept = await sidecar.ok("send_message", sessionId=other, text="keep me")
    await sidecar.wait_for(lambda e: e["type"] == "tool_call_started" and e["turnId"] == doomed["turnId"])
    assert (await sidecar.ok("abort", sessionId=stopped))["aborted"] == [doomed["turnId"]]
    release.set()  # the other session's read, held until now, finishes
    await sidecar.turn_done(doomed["turnId"])
    assert (await sidecar.turn_done(kept["turnId"]))[-1]["status"] == "done"
    ledger = sidecar.runtime.lifecycle.ledger
    assert [t.state for t in ledger.lane(stopped)] == ["stopped"]
    assert [t.state for t in ledger.lane(other)] == ["completed"]
    await sidecar.close()


async def test_deleting_a_busy_session_is_refused_then_allowed(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "ok"}))])
    log = ToolLog()
    release = log.hold("slow")
    sidecar = SidecarHarness(tmp_path, provider, log=log)
    sid = (await sidecar.ok("create_session", title="doomed"))["session"]["id"]
    turn = await sidecar.ok("send_message", sessionId=sid, text="work")
    busy = await sidecar.request("delete_session", sessionId=sid)
    assert busy["error"]["code"] == "session_busy"
    release.set()
    await sidecar.turn_done(turn["turnId"])
    listed = (await sidecar.ok("list_sessions"))["sessions"]
    assert [(s["id"], s["title"], s["turns"], s["busy"]) for s in listed] == [(sid, "doomed", 1, False)]
    assert (await sidecar.ok("delete_session", sessionId=sid))["deleted"] is True
    assert (await sidecar.ok("list_sessions"))["sessions"] == []
    await sidecar.close()


async def test_shutdown_parks_in_flight_turns_at_a_step_boundary_and_refuses_later_requests(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "x"}))])
    log = ToolLog()
    release = log.hold("slow")
    sidecar = SidecarHarness(tmp_path, provider, log=log)
    turn = await sidecar.ok("send_message", text="work")
    await sidecar.wait_for(lambda e: e["type"] == "tool_call_started")
    assert (await sidecar.ok("shutdown"))["inFlightTurns"] == 1
    stopping = asyncio.ensure_future(sidecar.server.shutdown())
    await until(lambda: sidecar.runtime.stopping)  # the drain began while the step runs
    release.set()  # the step finishes within the grace period
    await stopping
    finished = sidecar.events(turn["turnId"], "turn_finished")
    assert finished and finished[0]["status"] == "interrupted"  # parked: the next start answers it
    assert sidecar.events(turn["turnId"], "error")[0]["code"] == "turn_parked"
    from atomic_agent.sessions.session_store import SessionStore

    store = SessionStore(sidecar.runtime.state_dir)  # the runtime closed its own: read what reached disk
    kinds = [(e.kind, e.status) for e in store.entries(turn["sessionId"])]
    store.close()
    assert ("tool_result", "ok") in kinds  # the running step finished within the grace period
    assert kinds[0] == ("turn_started", None) and kinds[-1] == ("turn_finished", "interrupted")
    late = await sidecar.request("get_capabilities")
    assert late["error"]["code"] == "shutting_down"
    assert not sidecar.sink.problems
