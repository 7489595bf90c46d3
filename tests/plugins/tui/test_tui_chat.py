"""The chat tab end to end against a real runtime: a full turn with an approval answered in
the modal, a steer that lands mid-turn, a queued message that runs next, Esc, and the
mode toggle that persists."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.plugins.tui.approval_modal import ApprovalModal
from tests.plugins.tui.tui_harness import calls, chat_text, held, shown, tui_app, type_and_send, wait_for


async def test_a_full_turn_with_an_approval_answered_once(tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "rm -rf build"})), calls(("reply", {"text": "**cleaned** the build"}))]
    async with tui_app(tmp_path, script) as (app, pilot, runtime):
        await type_and_send(pilot, app, "clean the build")
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        modal = app.screen
        assert modal.request.category == "shell" and "rm -rf build" in modal.request.summary
        assert [a.key for a in modal.keys] == ["y", "s", "n"]  # no command shape: no [a]
        await pilot.press("y")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        text = chat_text(app)
        assert "you: clean the build" in text
        assert "→ t.gated" in text and "ok: ran" in text
        assert "**cleaned** the build" in text  # the reply, rendered by the Markdown widget
        result = app.orchestrator.last_result
        assert result.status == "done" and result.reply == "**cleaned** the build"
        audit = [json.loads(line) for line in (runtime.state_dir / "audit" / "approvals.ndjson").read_text().splitlines()]
        assert audit[-1]["approved"] is True and audit[-1]["who"] == "user"


async def test_deny_and_session_grant_reach_the_gate(tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "one"})), calls(("t.gated", {"path": "two"})),
              calls(("t.gated", {"path": "three"})), calls(("reply", {"text": "done"}))]
    async with tui_app(tmp_path, script) as (app, pilot, runtime):
        await type_and_send(pilot, app, "go")
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        first = app.screen
        await pilot.press("n")  # denied: the tool says so
        # the second call's modal, not the answered one still closing
        await wait_for(pilot, lambda: shown(app, ApprovalModal) and app.screen is not first)
        await pilot.click("#answer-s")  # by mouse: a session grant for the shell category
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert not isinstance(app.screen, ApprovalModal)  # the third call used the grant: no third modal
        text = chat_text(app)
        assert "error: denied" in text and text.count("ok: ran") == 2
        grants = runtime.gate.grants_snapshot()
        assert [(g["kind"], g["value"]) for g in grants] == [("category", "shell")]


async def test_a_steer_during_a_turn_lands_at_the_next_step(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "switched to tests"}))]
    log, release = held("slow")
    async with tui_app(tmp_path, script, log=log) as (app, pilot, runtime):
        await type_and_send(pilot, app, "read the docs")
        await wait_for(pilot, lambda: "→ t.read" in chat_text(app))
        await type_and_send(pilot, app, "actually, read the tests")  # Enter while busy: steer (default)
        assert app.query_one("#editor").text == ""
        release.set()
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        text = chat_text(app)
        assert "you (steer: lands at the next step): actually, read the tests" in text
        assert "steer applied at step 2: actually, read the tests" in text
        rows = [(e.kind, e.text) for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert rows == [("user", "read the docs"), ("user", "actually, read the tests")]


async def test_a_queued_message_runs_next_as_its_own_turn(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "first answer"})),
              calls(("reply", {"text": "second answer"}))]
    log, release = held("slow")
    async with tui_app(tmp_path, script, config={"tui": {"whileBusySubmit": "queue"}}, log=log) as (app, pilot, runtime):
        assert app.orchestrator.mode == "queue"
        await type_and_send(pilot, app, "first")
        await wait_for(pilot, lambda: "→ t.read" in chat_text(app))
        await type_and_send(pilot, app, "second")
        assert "1 queued" in str(app.query_one("#status").render())
        release.set()
        await wait_for(pilot, lambda: not app.orchestrator.busy and "second answer" in chat_text(app))
        sid = app.orchestrator.session_id
        turns = [e.text for e in runtime.sessions.entries(sid) if e.kind == "user"]
        assert turns == ["first", "second"]


async def test_slash_steer_and_queue_route_one_message_without_changing_the_mode(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "one"})),
              calls(("reply", {"text": "two"}))]
    log, release = held("slow")
    async with tui_app(tmp_path, script, log=log) as (app, pilot, runtime):
        await type_and_send(pilot, app, "start")
        await wait_for(pilot, lambda: "→ t.read" in chat_text(app))
        await type_and_send(pilot, app, "/queue later please")
        assert app.orchestrator.mode == "steer" and [p.text for p in app.orchestrator.pending] == ["later please"]
        release.set()
        await wait_for(pilot, lambda: not app.orchestrator.busy and "two" in chat_text(app))
        turns = [e.text for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert turns == ["start", "later please"]


async def test_ctrl_t_toggles_the_mode_and_saves_it(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, runtime):
        await pilot.press("ctrl+t")
        assert app.orchestrator.mode == "queue"
        saved = json.loads((runtime.state_dir / "config.json").read_text())
        assert saved["tui"]["whileBusySubmit"] == "queue"
        await pilot.press("ctrl+t")
        assert json.loads((runtime.state_dir / "config.json").read_text())["tui"]["whileBusySubmit"] == "steer"


async def test_escape_stops_the_turn_and_holds_the_queue(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "slow", "ms": 3000})), calls(("reply", {"text": "never"})),
              calls(("reply", {"text": "later"}))]
    async with tui_app(tmp_path, script, config={"tui": {"whileBusySubmit": "queue"}}) as (app, pilot, runtime):
        await type_and_send(pilot, app, "long job")
        await wait_for(pilot, lambda: "→ t.read" in chat_text(app))
        await type_and_send(pilot, app, "follow up")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert app.orchestrator.last_result.state == "stopped"
        assert app.orchestrator.paused and [p.text for p in app.orchestrator.pending] == ["follow up"]
        await type_and_send(pilot, app, "/queue run")
        await wait_for(pilot, lambda: not app.orchestrator.busy and not app.orchestrator.pending)
        turns = [e.text for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert turns == ["long job", "follow up"]
        assert app.orchestrator.last_result.status == "done"


async def test_slash_tool_forces_the_first_step_and_an_unknown_tool_is_refused(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "forced"})), calls(("reply", {"text": "read it"}))]
    async with tui_app(tmp_path, script) as (app, pilot, runtime):
        await type_and_send(pilot, app, "/tool t.nope do it")
        assert app.query_one("#editor").text == "/tool t.nope do it" and "no tool named 't.nope'" in chat_text(app)
        app.query_one("#editor").clear()
        await type_and_send(pilot, app, "/tool t.read read the forced thing")
        await wait_for(pilot, lambda: not app.orchestrator.busy and "read it" in chat_text(app))
        assert "→ t.read" in chat_text(app)
        request = runtime.provider.requests[0]
        assert "t.read" in (request.grammar or "") and '"reply"' not in (request.grammar or "")


async def test_a_turn_notice_shows_under_the_reply_with_its_lines_kept(tmp_path: Path) -> None:
    from tests.agent.turn_notice_kit import NoticePlugin

    script = [calls(("reply", {"text": "edited"}))]
    async with tui_app(tmp_path, script, extra_plugins={"notice": NoticePlugin()}) as (app, pilot, _):
        await type_and_send(pilot, app, "edit")
        await wait_for(pilot, lambda: not app.orchestrator.busy and "see them" in chat_text(app))
        text = chat_text(app)
        assert text.index("edited") < text.index("worktree: edits wait")
        assert " a.txt   | 2 +-\n new.txt | 1 +\n" in text  # one line per file, aligned as git printed it
