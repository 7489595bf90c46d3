"""Approvals other surfaces raise appear in the TUI and are answered once, from any surface.

The other surface here is real: a session of the same runtime routed to its own approval
host (as Telegram routes its chat's session) that shows the request somewhere the test
never answers; the records in `<state>/approvals.sqlite` are the one place every surface
answers, and the record says who answered first.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.plugins.tui.approval_modal import ApprovalModal
from tests.plugins.tui.tui_harness import calls, chat_text, shown, tui_app, type_and_send, wait_for


class Phone:
    """Another surface's approval host: it shows the request and nobody answers there."""

    def __init__(self) -> None:
        self.shown: list[Any] = []
        self.withdrawn = 0

    async def ask(self, request: Any) -> bool:
        self.shown.append(request)
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.withdrawn += 1  # the gate withdrew it: another surface answered first
            raise
        return False


def _routed_turn(runtime: Any, tmp_path: Path, phone: Phone) -> tuple[str, asyncio.Task[Any]]:
    session = runtime.sessions.create(tmp_path)
    runtime.gate.route_session(session.id, phone.ask, surface="telegram")
    return session.id, asyncio.ensure_future(runtime.run_turn("clean up", session_id=session.id, origin="telegram"))


def _notices(app: Any) -> str:
    return "\n".join(entry.text for entry in app.event_log.entries)


async def test_an_approval_raised_elsewhere_is_shown_here_and_the_first_answer_here_runs_the_call(
        tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "build"})), calls(("reply", {"text": "cleaned"}))]
    async with tui_app(tmp_path, script, size=(120, 36)) as (app, pilot, runtime):
        phone = Phone()
        session_id, turn = _routed_turn(runtime, tmp_path, phone)
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        modal = app.screen
        assert phone.shown and modal.request.approval_id == phone.shown[0].approval_id
        assert modal.request.session_id == session_id and "build" in modal.request.summary
        assert [a.key for a in modal.keys] == ["y", "s", "n"]  # no command shape in a record: no [a]
        await pilot.press("y")
        result = await asyncio.wait_for(turn, 10)
        assert result.status == "done" and result.reply == "cleaned"
        record = runtime.gate.records.get(modal.request.approval_id)
        assert (record.state, record.decision, record.answered_by, record.surface) == (
            "approved", "once", "operator", "tui")
        assert phone.withdrawn == 1  # the phone's prompt was withdrawn, not left open
        assert "you:" not in chat_text(app)  # the other surface's turn is not the TUI's chat


async def test_a_record_answered_elsewhere_first_closes_the_modal_and_says_who_answered(tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "build"})), calls(("reply", {"text": "cleaned"}))]
    async with tui_app(tmp_path, script, size=(120, 36)) as (app, pilot, runtime):
        phone = Phone()
        _session_id, turn = _routed_turn(runtime, tmp_path, phone)
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        approval_id = app.screen.request.approval_id
        runtime.gate.records.answer(approval_id, "deny", principal="operator", surface="telegram")
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal))
        result = await asyncio.wait_for(turn, 10)
        assert result.status == "done"
        assert f"approval {approval_id} was answered 'deny' by operator via telegram" in _notices(app)
        assert runtime.gate.records.get(approval_id).surface == "telegram"  # the first answer stands


async def test_a_late_answer_here_changes_nothing_and_is_told_who_answered_first(tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "build"})), calls(("reply", {"text": "cleaned"}))]
    async with tui_app(tmp_path, script, size=(120, 36)) as (app, pilot, runtime):
        phone = Phone()
        _session_id, turn = _routed_turn(runtime, tmp_path, phone)
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        approval_id = app.screen.request.approval_id
        runtime.gate.records.answer(approval_id, "deny", principal="operator", surface="serve")
        await pilot.press("y")  # before the next poll notices: the record refuses the late answer
        await wait_for(pilot, lambda: "already answered" in _notices(app))
        await asyncio.wait_for(turn, 10)
        record = runtime.gate.records.get(approval_id)
        assert (record.decision, record.surface) == ("deny", "serve")
        assert "answered 'deny' by operator via serve" in _notices(app)


async def test_the_tuis_own_prompt_closes_when_another_surface_answers_it_first(tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "build"})), calls(("reply", {"text": "cleaned"}))]
    async with tui_app(tmp_path, script, size=(120, 36)) as (app, pilot, runtime):
        await type_and_send(pilot, app, "clean the build")
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        approval_id = app.screen.request.approval_id
        runtime.gate.records.answer(approval_id, "once", principal="operator", surface="serve")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert not isinstance(app.screen, ApprovalModal)
        assert "ok: ran" in chat_text(app) and app.orchestrator.last_result.reply == "cleaned"
        assert f"approval {approval_id} was answered 'once' by operator via serve" in _notices(app)
        await pilot.pause(1.5)  # a poll or more later: the TUI's own record is never offered a second time
        assert not isinstance(app.screen, ApprovalModal)


QUESTION = {"prompt": "Delete the 3 old backups?", "options": [{"id": "keep", "label": "Keep them"},
                                                                {"id": "delete", "label": "Delete them"}],
            "reason": "irreversible_commitment", "evidence": "the backups are the only copies"}


async def test_a_question_of_the_tuis_own_turn_is_answered_by_option_and_esc_puts_it_off(tmp_path: Path) -> None:
    from atomic_agent.plugins.tui.question_modal import QuestionModal

    script = [calls(("ask_user", QUESTION)), calls(("reply", {"text": "deleted"}))]
    async with tui_app(tmp_path, script, size=(120, 36)) as (app, pilot, runtime):
        await type_and_send(pilot, app, "tidy the backups")
        await wait_for(pilot, lambda: shown(app, QuestionModal))
        question_id = next(iter(app.shared_approvals.showing))
        await pilot.press("escape")  # not now: it stays open for any surface, and is not shown again at once
        await pilot.pause(2.2)
        assert not isinstance(app.screen, QuestionModal) and app.orchestrator.busy
        assert runtime.gate.records.get(question_id).state == "pending"
        app.shared_approvals.not_now[question_id] = 0.0  # the minute has passed
        await wait_for(pilot, lambda: shown(app, QuestionModal))
        await pilot.press("2")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        record = runtime.gate.records.get(question_id)
        assert (record.state, record.decision, record.surface) == ("answered", "delete", "tui")
        assert "the person chose 'delete'" in chat_text(app) and app.orchestrator.last_result.reply == "deleted"


async def test_a_question_raised_elsewhere_takes_a_typed_answer_here(tmp_path: Path) -> None:
    from textual.widgets import Input

    from atomic_agent.plugins.tui.question_modal import QuestionModal

    typed = {**QUESTION, "options": [], "allow_free_text": True, "prompt": "Which backup folder?"}
    script = [calls(("ask_user", typed)), calls(("reply", {"text": "noted"}))]
    async with tui_app(tmp_path, script, size=(120, 36)) as (app, pilot, runtime):
        phone = Phone()
        _session_id, turn = _routed_turn(runtime, tmp_path, phone)
        await wait_for(pilot, lambda: shown(app, QuestionModal))
        assert "Which backup folder?" in str(app.screen.query_one("#question-text").render())
        app.screen.query_one(Input).value = "/srv/backups 2"
        await pilot.press("enter")
        result = await asyncio.wait_for(turn, 10)
        assert result.status == "done" and result.reply == "noted"
        record = [r for r in runtime.gate.records.find() if r.kind == "question"][0]
        assert (record.decision, record.answer_text, record.surface) == ("text", "/srv/backups 2", "tui")
