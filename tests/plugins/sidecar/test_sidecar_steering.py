"""steer_message through the sidecar: accepted (and applied), refused, full, and undelivered
(one steer_undelivered event per stranded message, after turn_finished)."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import MAX_PENDING_STEERS
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.sidecar.sidecar_harness import GatedProvider, SidecarHarness


async def test_steer_is_accepted_and_applied_at_the_next_step(tmp_path: Path):
    provider = GatedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))], gate_at=0)
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="start")
    await provider.entered.wait()
    assert await sidecar.ok("steer_message", sessionId=turn["sessionId"], text="do X instead") == \
        {"steered": True, "outcome": "accepted"}
    provider.release.set()
    events = await sidecar.turn_done(turn["turnId"])
    applied = [e for e in events if e["type"] == "steer_applied"]
    assert [(e["text"], e["stepIndex"]) for e in applied] == [("do X instead", 1)]
    assert not [e for e in events if e["type"] == "steer_undelivered"]
    await sidecar.close()


async def test_steer_without_a_running_turn_is_refused_not_queued(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    sid = (await sidecar.ok("create_session"))["session"]["id"]
    assert await sidecar.ok("steer_message", sessionId=sid, text="anyone?") == \
        {"steered": False, "outcome": "no_running_turn"}
    turn = await sidecar.ok("send_message", sessionId=sid, text="now a turn")
    events = await sidecar.turn_done(turn["turnId"])
    assert not [e for e in events if e["type"] in ("steer_applied", "steer_undelivered")]
    await sidecar.close()


async def test_steer_past_the_cap_is_refused_as_full(tmp_path: Path):
    provider = GatedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "ok"}))], gate_at=0)
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="start")
    await provider.entered.wait()
    outcomes = [(await sidecar.ok("steer_message", sessionId=turn["sessionId"], text=f"s{i}"))["outcome"]
                for i in range(MAX_PENDING_STEERS + 1)]
    assert outcomes == ["accepted"] * MAX_PENDING_STEERS + ["full"]
    empty = await sidecar.ok("steer_message", sessionId=turn["sessionId"], text="   ")
    assert empty == {"steered": False, "outcome": "empty"}
    provider.release.set()
    events = await sidecar.turn_done(turn["turnId"])
    assert len([e for e in events if e["type"] == "steer_applied"]) == MAX_PENDING_STEERS
    await sidecar.close()


async def test_steer_during_the_last_inference_comes_back_as_one_event_per_message(tmp_path: Path):
    provider = GatedProvider([calls(("reply", {"text": "done already"}))], gate_at=0)
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="quick one")
    await provider.entered.wait()
    for text in ("too late 1", "too late 2"):
        assert (await sidecar.ok("steer_message", sessionId=turn["sessionId"], text=text))["steered"]
    provider.release.set()
    events = await sidecar.turn_done(turn["turnId"])
    kinds = [e["type"] for e in events]
    assert kinds[-3:] == ["turn_finished", "steer_undelivered", "steer_undelivered"]
    assert [e["text"] for e in events if e["type"] == "steer_undelivered"] == ["too late 1", "too late 2"]
    await sidecar.close()


async def test_steer_into_an_aborted_turn_is_handed_back(tmp_path: Path):
    provider = GatedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "x"}))], gate_at=0)
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="start")
    await provider.entered.wait()
    assert (await sidecar.ok("steer_message", sessionId=turn["sessionId"], text="change course"))["steered"]
    await sidecar.ok("abort", sessionId=turn["sessionId"])
    provider.release.set()
    events = await sidecar.turn_done(turn["turnId"])
    assert [e["text"] for e in events if e["type"] == "steer_undelivered"] == ["change course"]
    assert next(e for e in events if e["type"] == "turn_finished")["status"] == "cancelled"
    await sidecar.close()


async def test_a_handed_back_steer_is_resent_once_by_its_steer_id(tmp_path: Path):
    provider = GatedProvider([calls(("reply", {"text": "done already"})), calls(("reply", {"text": "re: it"}))],
                             gate_at=0)
    sidecar = SidecarHarness(tmp_path, provider)
    turn = await sidecar.ok("send_message", text="quick one")
    await provider.entered.wait()
    assert (await sidecar.ok("steer_message", sessionId=turn["sessionId"], text="too late"))["steered"]
    provider.release.set()
    events = await sidecar.turn_done(turn["turnId"])
    (undelivered,) = [e for e in events if e["type"] == "steer_undelivered"]
    resent = await sidecar.ok("send_message", sessionId=turn["sessionId"], text=undelivered["text"],
                              resendSteerId=undelivered["steerId"])
    await sidecar.turn_done(resent["turnId"])
    again = await sidecar.request("send_message", sessionId=turn["sessionId"], text=undelivered["text"],
                                  resendSteerId=undelivered["steerId"])
    assert again["ok"] is False and again["error"]["code"] == "steer_not_queued"
    await sidecar.close()
