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
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness, ThreadGatedProvider
from tests.plugins.tui.tui_harness import chat_text, shown, type_and_send, wait_for

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


async def open_in_sessions_tab(pilot: Any, app: AtomicTui, session_id: str) -> None:
    """F2, the session's row, Enter: the chat tab shows it."""
    from atomic_agent.plugins.tui.attached_sessions_panel import AttachedSessionsPanel
    from atomic_agent.plugins.tui.mouse_interaction import RowList

    await pilot.press("f2")
    panel = app.query_one(AttachedSessionsPanel)
    await wait_for(pilot, lambda: any(r["id"] == session_id for r in panel.rows), timeout=WAIT_S)
    row = next(i for i, r in enumerate(panel.rows) if r["id"] == session_id)
    assert (panel.rows[row]["origin"], panel.rows[row]["channel"], panel.rows[row]["busy"]) == ("http", "http", True)
    table = panel.query_one(RowList)
    table.focus()
    table.move_cursor(row=row)
    await pilot.press("enter")
    await wait_for(pilot, lambda: remote(app).session_id == session_id, timeout=WAIT_S)


async def test_attached_tui_sees_follows_approves_and_sends_into_another_clients_session(tmp_path: Path):
    provider = ThreadGatedProvider(SCRIPT, gate_at=0)  # the other client's first step waits for the test
    serve = ServeHarness(tmp_path, provider, operator_token=TOKEN)
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            out: dict[str, Any] = {}
            thread = other_client_chat(serve, out)
            await asyncio.to_thread(provider.entered.wait, WAIT_S)
            sessions = await remote(app).sessions()
            assert len(sessions) == 1
            session_id = sessions[0]["id"]
            await open_in_sessions_tab(pilot, app, session_id)
            assert "run ls" in chat_text(app)  # its transcript so far
            await wait_for(pilot, lambda: remote(app).busy, timeout=WAIT_S)
            provider.release.set()
            # its steps arrive live, then the approval it raises is asked here (the operator's surface)
            from atomic_agent.plugins.tui.approval_modal import ApprovalModal

            await wait_for(pilot, lambda: shown(app, ApprovalModal), timeout=WAIT_S)
            assert "t.gated" in chat_text(app)  # the call's line in the live feed, before it was approved
            request = app.screen.request
            assert (request.tool, request.category, request.session_id) == ("t.gated", "shell", session_id)
            await pilot.press("y")
            await wait_for(pilot, lambda: "listed for the other client" in chat_text(app), timeout=WAIT_S)
            await asyncio.to_thread(thread.join, WAIT_S)
            assert out["response"].json()["choices"][0]["message"]["content"] == "listed for the other client"
            assert remote(app).approvals.answered == [(request.approval_id, "once")]
            assert "ok: ran" in chat_text(app)  # the tool result's line
            # a message typed here runs as a turn of that session
            await wait_for(pilot, lambda: not remote(app).busy, timeout=WAIT_S)
            await type_and_send(pilot, app, "and now from the terminal")
            await wait_for(pilot, lambda: "second answer from serve" in chat_text(app), timeout=WAIT_S)
            detail = httpx.get(f"{serve.base_url}/api/sessions/{session_id}", headers={"X-Atomic-Operator": TOKEN})
            users = [e["text"] for e in detail.json()["entries"] if e["kind"] == "user"]
            assert users == ["run ls", "and now from the terminal"]
    finally:
        provider.release.set()
        serve.stop()


async def test_enter_while_a_remote_turn_runs_steers_it_through_serve(tmp_path: Path):
    provider = ThreadGatedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "steered reply"}))],
                                   gate_at=0)
    serve = ServeHarness(tmp_path, provider, operator_token=TOKEN)
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            out: dict[str, Any] = {}
            thread = other_client_chat(serve, out)
            await asyncio.to_thread(provider.entered.wait, WAIT_S)
            session_id = (await remote(app).sessions())[0]["id"]
            await open_in_sessions_tab(pilot, app, session_id)
            await wait_for(pilot, lambda: remote(app).busy, timeout=WAIT_S)
            await type_and_send(pilot, app, "also check the README")
            await wait_for(pilot, lambda: "steer accepted" in chat_text(app), timeout=WAIT_S)
            provider.release.set()
            await asyncio.to_thread(thread.join, WAIT_S)
            await wait_for(pilot, lambda: "steered reply" in chat_text(app), timeout=WAIT_S)
            assert not remote(app).pending  # steered, not queued
            second_prompt = str(provider.inner.requests[1])
            assert "also check the README" in second_prompt
    finally:
        provider.release.set()
        serve.stop()


async def test_the_event_stream_reconnects_when_serve_comes_back(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider([]), operator_token=TOKEN)
    port = serve.port
    again = None
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            await asyncio.to_thread(serve.stop)
            await wait_for(pilot, lambda: "lost the link to serve" in chat_text(app), timeout=WAIT_S)
            assert not remote(app).connected
            again = await asyncio.to_thread(ServeHarness, tmp_path / "again", ScriptedProvider([]),
                                            operator_token=TOKEN, port=port)
            await wait_for(pilot, lambda: "reconnected to serve" in chat_text(app), timeout=WAIT_S)
            assert remote(app).connected and app.is_running
    finally:
        if again is not None:
            again.stop()


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


async def test_a_turn_that_ran_and_failed_is_said_and_not_sent_twice(tmp_path: Path):
    from atomic_agent.api import ProviderUnavailableError

    down = [ProviderUnavailableError("the model server is down") for _ in range(10)]
    serve = ServeHarness(tmp_path, ScriptedProvider(down), operator_token=TOKEN)
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            await type_and_send(pilot, app, "hello while the model is down")
            await wait_for(pilot, lambda: "the turn failed:" in chat_text(app), timeout=WAIT_S)
            assert "Your message is kept in session" in chat_text(app)
            assert not remote(app).pending and not remote(app).busy
            session_id = remote(app).session_id
            detail = httpx.get(f"{serve.base_url}/api/sessions/{session_id}", headers={"X-Atomic-Operator": TOKEN})
            assert [e["text"] for e in detail.json()["entries"] if e["kind"] == "user"] == [
                "hello while the model is down"]
    finally:
        serve.stop()


async def test_records_another_process_asks_are_asked_here_and_close_when_answered_elsewhere(tmp_path: Path):
    from atomic_agent.approval.approval_records import FrozenCall
    from atomic_agent.plugins.tui.approval_modal import ApprovalModal

    serve = ServeHarness(tmp_path, ScriptedProvider([]), operator_token=TOKEN)
    records = serve.runtime.gate.records
    try:
        app = AtomicTui(None, attachment=ServeAttachment(serve.base_url, operator_token=TOKEN))
        async with app.run_test(size=(110, 34)) as pilot:
            await wait_for(pilot, lambda: remote(app).connected, timeout=WAIT_S)
            # a CLI turn in another process asks: its record is not on serve's event stream
            first = records.create(kind="approval", session_id="cli-session", category="shell", level=1,
                                   summary="rm -rf build", frozen=FrozenCall("os.shell", argv=("rm", "-rf", "build")),
                                   ttl_s=600)
            await wait_for(pilot, lambda: shown(app, ApprovalModal), timeout=WAIT_S)
            assert app.screen.request.approval_id == first.id
            await pilot.press("y")
            await wait_for(pilot, lambda: records.get(first.id).state != "pending", timeout=WAIT_S)
            assert (records.get(first.id).decision, records.get(first.id).answered_by) == ("once", "operator")
            # the next is answered from Telegram first: the modal here closes and says so
            second = records.create(kind="approval", session_id="cli-session", category="shell", level=1,
                                    summary="make clean", frozen=FrozenCall("os.shell", argv=("make", "clean")),
                                    ttl_s=600)
            await wait_for(pilot, lambda: shown(app, ApprovalModal)
                           and app.screen.request.approval_id == second.id, timeout=WAIT_S)
            records.answer(second.id, "deny", principal="operator", surface="telegram")
            await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal), timeout=WAIT_S)
            assert records.get(second.id).surface == "telegram"  # the first answer stands
            assert app.is_running
    finally:
        serve.stop()
