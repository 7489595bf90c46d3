"""Approvals through the sidecar: the request carries category and label, one answer per
request, a late answer is a clear error, abort denies, and the level is persisted then live."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomic_agent.plugins.sidecar.sidecar_server import SidecarLimits
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.sidecar.sidecar_harness import SidecarHarness


def gated_script(*texts: str) -> list[str]:
    return [calls(("t.gated", {"path": "ls"})), *[calls(("reply", {"text": t})) for t in texts or ("ok",)]]


async def request_of(sidecar: SidecarHarness, turn: dict) -> dict:
    return await sidecar.wait_for(lambda e: e["type"] == "approval_request" and e.get("turnId") == turn["turnId"])


async def test_approval_round_trip_approves_once(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(gated_script()))
    turn = await sidecar.ok("send_message", text="run ls")
    asked = await request_of(sidecar, turn)
    assert (asked["category"], asked["label"], asked["tool"]) == ("shell", "shell command", "t.gated")
    assert asked["summary"] == "run ls" and asked["level"] == 1 and asked["sessionId"] == turn["sessionId"]
    assert await sidecar.ok("approval_response", approvalId=asked["approvalId"], approved=True) == \
        {"approvalId": asked["approvalId"], "approved": True, "decision": "once"}
    events = await sidecar.turn_done(turn["turnId"])
    resolved = next(e for e in events if e["type"] == "approval_resolved")
    assert resolved["outcome"] == "answered" and resolved["approved"] is True
    result = next(e for e in events if e["type"] == "tool_call_result")
    assert result["status"] == "ok" and result["summary"] == "ran"
    again = await sidecar.request("approval_response", approvalId=asked["approvalId"], decision="deny")
    assert again["error"]["code"] == "approval_not_pending" and "already answered" in again["error"]["message"]
    await sidecar.close()


async def test_denied_approval_makes_the_tool_return_an_error(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(gated_script()))
    turn = await sidecar.ok("send_message", text="run ls")
    asked = await request_of(sidecar, turn)
    await sidecar.ok("approval_response", approvalId=asked["approvalId"], decision="deny")
    events = await sidecar.turn_done(turn["turnId"])
    assert next(e for e in events if e["type"] == "tool_call_result")["status"] == "error"
    await sidecar.close()


async def test_session_decision_grants_the_category_for_that_session(tmp_path: Path):
    provider = ScriptedProvider([*gated_script("one"), *gated_script("two")])
    sidecar = SidecarHarness(tmp_path, provider)
    first = await sidecar.ok("send_message", text="run ls")
    asked = await request_of(sidecar, first)
    assert asked["canGrantCategory"] is True and asked["canGrantShape"] is False
    shape = await sidecar.request("approval_response", approvalId=asked["approvalId"], decision="shape")
    assert shape["error"]["code"] == "invalid_decision"
    await sidecar.ok("approval_response", approvalId=asked["approvalId"], decision="session")
    await sidecar.turn_done(first["turnId"])
    second = await sidecar.ok("send_message", sessionId=first["sessionId"], text="again")
    events = await sidecar.turn_done(second["turnId"])
    assert not [e for e in events if e["type"] == "approval_request"]
    assert next(e for e in events if e["type"] == "tool_call_result")["status"] == "ok"
    await sidecar.close()


async def test_unanswered_approval_times_out_denied_and_a_late_answer_is_an_error(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(gated_script()), limits=SidecarLimits(approval_timeout_s=0.05))
    turn = await sidecar.ok("send_message", text="run ls")
    asked = await request_of(sidecar, turn)
    events = await sidecar.turn_done(turn["turnId"])
    resolved = next(e for e in events if e["type"] == "approval_resolved")
    assert resolved["outcome"] == "timed_out" and resolved["approved"] is False
    assert next(e for e in events if e["type"] == "tool_call_result")["status"] == "error"
    late = await sidecar.request("approval_response", approvalId=asked["approvalId"], approved=True)
    # the durable record says so (the sidecar answers through the records every surface shares)
    assert late["error"]["code"] == "approval_not_pending" and "expired at" in late["error"]["message"]
    await sidecar.close()


async def test_answer_for_an_unknown_approval_is_an_error(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    unknown = await sidecar.request("approval_response", approvalId="apr_00ff", approved=True)
    assert unknown["error"]["code"] == "approval_not_pending" and "was ever requested" in unknown["error"]["message"]
    malformed = await sidecar.request("approval_response", approvalId="42", approved=True)
    assert malformed["error"]["code"] == "invalid_request"
    contradicting = await sidecar.request("approval_response", approvalId="apr_00ff", approved=False, decision="once")
    assert contradicting["error"]["code"] == "invalid_request"
    await sidecar.close()


async def test_abort_denies_the_pending_approval_of_the_turn(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(gated_script()))
    turn = await sidecar.ok("send_message", text="run ls")
    asked = await request_of(sidecar, turn)
    await sidecar.ok("abort", sessionId=turn["sessionId"])
    events = await sidecar.turn_done(turn["turnId"])
    resolved = next(e for e in events if e["type"] == "approval_resolved")
    assert resolved["outcome"] == "cancelled" and resolved["approvalId"] == asked["approvalId"]
    assert events[-1]["type"] == "turn_finished" and events[-1]["status"] == "cancelled"
    await sidecar.close()


@pytest.mark.parametrize("asked", [9, 0, 4.5, 4.0, "3", True])
async def test_set_approval_level_refuses_anything_but_an_integer_on_the_ladder(tmp_path: Path, asked: object):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    response = await sidecar.request("set_approval_level", level=asked)
    assert response["ok"] is False
    error = response["error"]
    assert error["code"] == "invalid_request" and "level" in error["message"]
    config = sidecar.runtime.state_dir / "config.json"
    assert not config.exists() or json.loads(config.read_text()).get("agent", {}).get("approvalLevel", 1) == 1
    assert sidecar.runtime.gate.level == 1
    await sidecar.close()


@pytest.mark.parametrize("applied", [3, 5])
async def test_set_approval_level_persists_then_applies(tmp_path: Path, applied: int):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    result = await sidecar.ok("set_approval_level", level=applied)
    assert (result["level"], result["previous"]) == (applied, 1)
    stored = json.loads((sidecar.runtime.state_dir / "config.json").read_text())
    assert stored["agent"]["approvalLevel"] == applied
    live = (await sidecar.ok("get_capabilities"))["agent"]
    assert live["approvalLevel"] == applied and live["approvalRequired"] is (applied < 5)
    await sidecar.close()


async def test_capabilities_report_the_live_gate_level_not_the_boot_config(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(gated_script()))
    sidecar.runtime.gate.set_level(5)  # what --no-approval does, never written to config.json
    caps = await sidecar.ok("get_capabilities")
    assert caps["agent"]["approvalLevel"] == 5 and caps["agent"]["approvalLevelName"] == "full trust"
    assert {c["name"] for c in caps["approvalCategories"]} >= {"shell", "trust_config"}
    assert next(c for c in caps["approvalCategories"] if c["name"] == "trust_config")["grantable"] is False
    turn = await sidecar.ok("send_message", text="run ls")
    events = await sidecar.turn_done(turn["turnId"])
    assert not [e for e in events if e["type"] == "approval_request"]
    bad = await sidecar.request("set_approval_level", level="high")
    assert bad["error"]["code"] == "invalid_request"
    await sidecar.close()


async def test_hello_opts_into_tracing_which_is_off_by_default(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider())
    from atomic_agent.plugins.sidecar.sidecar_main import without_tracing

    sidecar.runtime.boot = without_tracing(sidecar.runtime.boot)
    hello = await sidecar.ok("hello", protocolVersion=1, client={"name": "tauri-host", "version": "0.1"})
    assert hello["capabilities"]["tracing"] is False
    first = await sidecar.ok("send_message", text="untraced")
    await sidecar.turn_done(first["turnId"])
    traces = sidecar.runtime.state_dir / "traces"
    assert not (traces / f"{first['sessionId']}.ndjson").exists()
    assert (await sidecar.ok("hello", tracing=True))["capabilities"]["tracing"] is True
    second = await sidecar.ok("send_message", text="traced")
    await sidecar.turn_done(second["turnId"])
    assert (traces / f"{second['sessionId']}.ndjson").exists()
    await sidecar.close()


QUESTION_ARGS = {"prompt": "Delete the 3 old backups?", "reason": "irreversible_commitment",
                 "evidence": "they are the only copies", "allow_free_text": True,
                 "options": [{"id": "yes", "label": "Delete them"}, {"id": "no", "label": "Keep them"}]}


def question_script(text: str = "done") -> list[str]:
    return [calls(("ask_user", QUESTION_ARGS)), calls(("reply", {"text": text}))]


async def test_a_question_is_an_event_answered_by_option_and_the_turn_resumes_from_it(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(question_script()))
    turn = await sidecar.ok("send_message", text="clean up")
    asked = await sidecar.wait_for(lambda e: e["type"] == "question_request" and e.get("turnId") == turn["turnId"])
    assert asked["question"]["prompt"] == "Delete the 3 old backups?" and asked["question"]["allowFreeText"]
    assert [o["id"] for o in asked["question"]["options"]] == ["yes", "no"]
    wrong = await sidecar.request("question_response", approvalId=asked["approvalId"], option="maybe")
    assert wrong["error"]["code"] == "invalid_decision" and "not an option" in wrong["error"]["message"]
    answered = await sidecar.ok("question_response", approvalId=asked["approvalId"], option="no")
    assert answered == {"approvalId": asked["approvalId"], "state": "answered", "option": "no",
                        "answeredBy": "operator", "surface": "sidecar"}
    events = await sidecar.turn_done(turn["turnId"])
    resolved = next(e for e in events if e["type"] == "question_resolved")
    assert (resolved["outcome"], resolved["option"], resolved["surface"]) == ("answered", "no", "sidecar")
    result = next(e for e in events if e["type"] == "tool_call_result" and e["tool"] == "ask_user")
    assert result["status"] == "ok" and "chose 'no' (Keep them)" in result["summary"]
    late = await sidecar.request("question_response", approvalId=asked["approvalId"], text="delete after all")
    assert late["error"]["code"] == "approval_not_pending"
    assert "already answered 'no' by operator via sidecar at" in late["error"]["message"]
    await sidecar.close()


async def test_a_question_answered_with_free_text(tmp_path: Path):
    sidecar = SidecarHarness(tmp_path, ScriptedProvider(question_script()))
    turn = await sidecar.ok("send_message", text="clean up")
    asked = await sidecar.wait_for(lambda e: e["type"] == "question_request")
    await sidecar.ok("question_response", approvalId=asked["approvalId"], text="only the oldest one")
    events = await sidecar.turn_done(turn["turnId"])
    result = next(e for e in events if e["type"] == "tool_call_result" and e["tool"] == "ask_user")
    assert "the person answered: only the oldest one" in result["summary"]
    both = await sidecar.request("question_response", approvalId=asked["approvalId"], option="no", text="x")
    assert both["error"]["code"] == "invalid_request"  # option or text, not both
    await sidecar.close()


async def test_a_question_answered_on_another_surface_is_resolved_here_with_who_answered(tmp_path: Path):
    from atomic_agent.approval.approval_records import ApprovalRecords

    sidecar = SidecarHarness(tmp_path, ScriptedProvider(question_script()))
    turn = await sidecar.ok("send_message", text="clean up")
    asked = await sidecar.wait_for(lambda e: e["type"] == "question_request")
    listed = (await sidecar.ok("approval_list"))["approvals"]
    assert [(a["approvalId"], a["kind"], a["shownHere"]) for a in listed] == [(asked["approvalId"], "question", True)]
    elsewhere = ApprovalRecords.for_state_dir(tmp_path / "state")  # `atomic-agent approvals answer`, another process
    elsewhere.answer(asked["approvalId"], "yes", principal="operator", surface="cli")
    elsewhere.close()
    events = await sidecar.turn_done(turn["turnId"])
    resolved = next(e for e in events if e["type"] == "question_resolved")
    assert (resolved["state"], resolved["option"], resolved["surface"]) == ("answered", "yes", "cli")
    result = next(e for e in events if e["type"] == "tool_call_result" and e["tool"] == "ask_user")
    assert "chose 'yes' (Delete them)" in result["summary"]
    late = await sidecar.request("question_response", approvalId=asked["approvalId"], option="no")
    assert "already answered 'yes' by operator via cli at" in late["error"]["message"]
    await sidecar.close()
