"""`ask_user` through serve: the question is a durable record shown as an approval_request
of kind "question"; the turn's client answers it with an option id, the turn resumes from
that answer, a second answer hears who answered first, a decision meant for approvals and
another client's answer are refused, and a question without a valid reason never reaches
anyone."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx

from atomic_agent.approval.approval_records import ApprovalRecords
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness

CLIENT = {"X-Atomic-Client": "ask-user-client-0123456789"}
OTHER = {"X-Atomic-Client": "someone-else-client-012345"}
QUESTION = {"prompt": "Delete the 3 old backups?", "reason": "irreversible_commitment",
            "evidence": "they are the only copies",
            "options": [{"id": "delete", "label": "Delete them"}, {"id": "keep", "label": "Keep them"}]}


def chat(serve: ServeHarness, out: dict) -> threading.Thread:
    def run() -> None:
        out["response"] = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S, headers=CLIENT,
                                     json={"model": "m", "messages": [{"role": "user", "content": "clean up"}]})

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def wait_pending(serve: ServeHarness) -> list[dict]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        data = httpx.get(f"{serve.base_url}/api/approvals", headers=CLIENT).json()["data"]
        if data:
            return data
        time.sleep(0.02)
    raise AssertionError("no question was shown")


def test_ask_user_round_trips_through_serve(tmp_path: Path) -> None:
    provider = ScriptedProvider([calls(("ask_user", QUESTION)), calls(("reply", {"text": "kept them"}))])
    serve = ServeHarness(tmp_path, provider)
    try:
        out: dict = {}
        thread = chat(serve, out)
        shown = wait_pending(serve)
        assert shown[0]["kind"] == "question" and shown[0]["question"]["options"][1]["id"] == "keep"
        qid = shown[0]["approvalId"]
        wrong = httpx.post(f"{serve.base_url}/api/approvals/{qid}", json={"decision": "once"}, headers=CLIENT)
        assert wrong.status_code == 400 and "is a question" in wrong.text
        bad = httpx.post(f"{serve.base_url}/api/approvals/{qid}", json={"option": "burn"}, headers=CLIENT)
        assert bad.status_code == 400 and "not an option" in bad.text
        stranger = httpx.post(f"{serve.base_url}/api/approvals/{qid}", json={"option": "delete"}, headers=OTHER)
        assert stranger.status_code == 403
        answer = httpx.post(f"{serve.base_url}/api/approvals/{qid}", json={"option": "keep"}, headers=CLIENT)
        assert answer.status_code == 200 and answer.json()["state"] == "answered"
        thread.join(WAIT_S)
        assert out["response"].json()["choices"][0]["message"]["content"] == "kept them"
        assert "the person chose 'keep' (Keep them)" in provider.requests[1].prompt
        late = httpx.post(f"{serve.base_url}/api/approvals/{qid}", json={"option": "delete"}, headers=CLIENT)
        assert late.status_code == 410 and "already answered 'keep'" in late.text
    finally:
        serve.stop()
    record = ApprovalRecords(tmp_path / "state" / "approvals.sqlite").get(qid)
    assert (record.state, record.decision, record.surface) == ("answered", "keep", "serve")


def test_routine_ambiguity_is_refused_before_anyone_is_asked(tmp_path: Path) -> None:
    routine = {**QUESTION, "reason": "routine_ambiguity"}
    provider = ScriptedProvider([calls(("ask_user", routine)), calls(("reply", {"text": "assumed"}))])
    serve = ServeHarness(tmp_path, provider)
    try:
        out: dict = {}
        chat(serve, out).join(WAIT_S)
        assert out["response"].json()["choices"][0]["message"]["content"] == "assumed"
        assert "decide from the context and state your assumption" in provider.requests[1].prompt
    finally:
        serve.stop()
    assert ApprovalRecords(tmp_path / "state" / "approvals.sqlite").find() == []
