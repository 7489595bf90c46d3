"""`atomic-agent tui --attach`: the app over a REAL serve on loopback (scripted model, test
tools): it sees a session another client started, follows its steps live, answers its
approval, sends a message into it; a serve that is down, a wrong token and a serve that dies
mid-session are notices, and nothing typed is lost."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from atomic_agent.plugins.tui.remote_orchestrator import RemoteOrchestrator
from atomic_agent.plugins.tui.serve_attachment import AttachError, ServeAttachment, locate, probe
from atomic_agent.plugins.tui.tui_app import AtomicTui
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness
from tests.plugins.tui.tui_harness import chat_text, type_and_send, wait_for

TOKEN = "operator-token-for-the-attach-test-0123456789abcdef"
OTHER = {"X-Atomic-Client": "another-client-0123456789"}
SCRIPT = [calls(("t.gated", {"path": "ls"})), calls(("reply", {"text": "listed for the other client"})),
          calls(("reply", {"text": "second answer from serve"}))]


def other_client_chat(serve: ServeHarness, out: dict[str, Any]) -> threading.Thread:
    def run() -> None:
        out["response"] = httpx.post(f"{serve.base_url}/v1/chat/completions", timeout=WAIT_S, headers=OTHER,
                                     json={"model": "m", "messages": [{"role": "user", "content": "run ls"}]})

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def remote(app: AtomicTui) -> RemoteOrchestrator:
    assert app.remote is not None
    return app.remote


async def test_attached_tui_sees_follows_approves_and_sends_into_another_clients_session(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(SCRIPT), operator_token=TOKEN)
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            out: dict[str, Any] = {}
            thread = other_client_chat(serve, out)
            # the approval the other client's turn raises is asked here (the operator's surface)
            from atomic_agent.plugins.tui.approval_modal import ApprovalModal

            await wait_for(pilot, lambda: isinstance(app.screen, ApprovalModal), timeout=WAIT_S)
            request = app.screen.request
            assert (request.tool, request.category) == ("t.gated", "shell")
            session_id = request.session_id
            # the Sessions tab lists it; opening it puts its live steps in the chat
            app.open_session(session_id)
            await pilot.press("y")
            await wait_for(pilot, lambda: "listed for the other client" in chat_text(app), timeout=WAIT_S)
            await asyncio.to_thread(thread.join, WAIT_S)
            assert out["response"].status_code == 200
            assert remote(app).approvals.answered == [(request.approval_id, "once")]
            assert "ok: ran" in chat_text(app)  # the tool result's line, from the live feed
            rows = await remote(app).sessions()
            assert [r["channel"] for r in rows if r["id"] == session_id] == ["http"]
            # a message typed here runs as a turn of that session
            await wait_for(pilot, lambda: not remote(app).busy, timeout=WAIT_S)
            await type_and_send(pilot, app, "and now from the terminal")
            await wait_for(pilot, lambda: "second answer from serve" in chat_text(app), timeout=WAIT_S)
            detail = httpx.get(f"{serve.base_url}/api/sessions/{session_id}", headers={"X-Atomic-Operator": TOKEN})
            users = [e["text"] for e in detail.json()["entries"] if e["kind"] == "user"]
            assert users == ["run ls", "and now from the terminal"]
    finally:
        serve.stop()


async def test_a_serve_dying_mid_session_is_a_notice_and_the_message_is_kept(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider(SCRIPT[2:]), operator_token=TOKEN)
    stopped = False
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            await asyncio.to_thread(serve.stop)
            stopped = True
            await wait_for(pilot, lambda: "lost the link to serve" in chat_text(app), timeout=WAIT_S)
            await type_and_send(pilot, app, "typed while serve was down")
            await wait_for(pilot, lambda: "the message was not sent" in chat_text(app), timeout=WAIT_S)
            assert [p.text for p in remote(app).pending] == ["typed while serve was down"]
            assert app.is_running
    finally:
        if not stopped:
            serve.stop()


async def test_no_serve_and_a_wrong_token_are_refused_with_what_to_do(tmp_path: Path):
    with pytest.raises(AttachError, match="atomic-agent serve"):
        locate(tmp_path, None)
    serve = ServeHarness(tmp_path, ScriptedProvider([]), operator_token=TOKEN)
    try:
        with pytest.raises(AttachError, match="403"):
            await probe(ServeAttachment(serve.base_url, operator_token="not-the-token-0123456789abcdef"))
        await probe(ServeAttachment(serve.base_url, operator_token=TOKEN))
    finally:
        serve.stop()
    with pytest.raises(AttachError, match="cannot reach serve"):
        await probe(ServeAttachment(serve.base_url, operator_token=TOKEN))
