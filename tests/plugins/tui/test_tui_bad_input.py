"""Bad input keeps the app running with a readable notice and nothing typed lost: a 40-column
terminal, a resize mid-turn, a 1 MB paste, a provider failing mid-turn, a read-only state
dir, bad text, unknown commands — and a steer the turn ends before folding in is sent next."""

from __future__ import annotations

from pathlib import Path

from textual import events

from atomic_agent.api import ProviderUnavailableError
from atomic_agent.plugins.tui.steering_editor import SteeringEditor
from tests.plugins.tui.tui_harness import calls, chat_text, held, tui_app, type_and_send, wait_for


def notices(app) -> list[str]:
    """Every notice the app showed (its event log records each as it is raised)."""
    return [e.text for e in app.event_log.entries if e.source == "notice"]


async def test_a_40_column_terminal_and_a_resize_mid_turn(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "slow", "ms": 300})), calls(("reply", {"text": "narrow but fine"}))]
    async with tui_app(tmp_path, script, size=(40, 20)) as (app, pilot, _runtime):
        await type_and_send(pilot, app, "hello from a narrow terminal")
        await wait_for(pilot, lambda: "→ t.read" in chat_text(app))
        await pilot.resize_terminal(120, 40)
        await pilot.resize_terminal(40, 12)
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert "narrow but fine" in chat_text(app) and app.is_running
        await pilot.press("f2")  # every tab still lays out
        await pilot.press("f4")
        await pilot.press("f1")


async def test_a_one_megabyte_paste_stays_whole_in_the_editor_and_is_sent_whole(tmp_path: Path) -> None:
    big = ("line of pasted text " * 50 + "\n") * 1050  # ~1 MB
    async with tui_app(tmp_path, [calls(("reply", {"text": "got it"}))]) as (app, pilot, runtime):
        editor = app.query_one(SteeringEditor)
        editor.focus()
        app.post_message(events.Paste(big))  # as the terminal driver delivers a bracketed paste
        await pilot.pause()
        assert editor.text == big
        await pilot.press("enter")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert editor.text == ""
        users = [e.text for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert users == [big]
        assert "more characters]" in chat_text(app)  # the bubble shows a bounded preview


async def test_a_steer_too_long_for_the_inbox_is_queued_as_its_own_turn(tmp_path: Path) -> None:
    long = "x" * (70 * 1024)
    script = [calls(("t.read", {"path": "slow"})), calls(("reply", {"text": "one"})),
              calls(("reply", {"text": "two"}))]
    log, release = held("slow")
    async with tui_app(tmp_path, script, log=log) as (app, pilot, runtime):
        await type_and_send(pilot, app, "start")
        await wait_for(pilot, lambda: "→ t.read" in chat_text(app))
        await type_and_send(pilot, app, long)
        assert "too long for a steer" in chat_text(app)
        release.set()
        await wait_for(pilot, lambda: not app.orchestrator.busy and not app.orchestrator.pending)
        users = [e.text for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert users == ["start", long]


async def test_a_provider_failing_mid_turn_is_a_notice_and_the_next_message_works(tmp_path: Path) -> None:
    script = [calls(("t.read", {"path": "a"})), ProviderUnavailableError("connection refused"),
              calls(("reply", {"text": "back again"}))]
    async with tui_app(tmp_path, script) as (app, pilot, _runtime):
        await type_and_send(pilot, app, "first")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        text = chat_text(app)
        assert "the turn failed" in text and "Traceback" not in text
        assert app.orchestrator.last_result.status == "failed"
        await type_and_send(pilot, app, "second")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert "back again" in chat_text(app)


async def test_a_state_dir_that_cannot_be_written_keeps_settings_for_the_run_and_says_so(tmp_path: Path,
                                                                                      monkeypatch) -> None:
    # the same failure as a read-only dir (this also runs as root, whom file modes do not stop)
    from atomic_agent.api import approval_gate, config_file

    def refuse(*_args, **_kwargs):
        raise PermissionError(13, "Permission denied", "config.json")

    monkeypatch.setattr(config_file, "save_raw_config", refuse)
    async with tui_app(tmp_path, []) as (app, pilot, runtime):
        await pilot.press("ctrl+t")
        assert app.orchestrator.mode == "queue" and app.is_running
        assert any("could not save tui.whileBusySubmit" in n and "until you quit" in n for n in notices(app))
        app.action_show_tab("privacy")
        await pilot.pause()
        from atomic_agent.plugins.tui.privacy_panel import PrivacyOrchestrator

        monkeypatch.setattr(approval_gate, "set_approval_level", refuse)
        assert PrivacyOrchestrator(app).set_level(3) == 1  # nothing changed: the running level stays
        assert runtime.gate.level == 1
        assert any("the level stays 1" in n for n in notices(app))


async def test_a_store_failure_when_sending_keeps_the_message_at_the_head_of_the_queue(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    async with tui_app(tmp_path, [calls(("reply", {"text": "finally"}))]) as (app, pilot, runtime):
        real = runtime.run_turn
        failures = [OSError(30, "Read-only file system")]

        async def flaky(*args, **kwargs):
            if failures:
                raise failures.pop()
            return await real(*args, **kwargs)

        monkeypatch.setattr(runtime, "run_turn", flaky)
        await type_and_send(pilot, app, "please keep me")
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        assert [p.text for p in app.orchestrator.pending] == ["please keep me"] and app.orchestrator.paused
        assert "Read-only file system" in chat_text(app) and "/queue run" in chat_text(app)
        await type_and_send(pilot, app, "/queue run")
        await wait_for(pilot, lambda: not app.orchestrator.busy and "finally" in chat_text(app))


async def test_bad_text_and_unknown_commands_stay_in_the_editor(tmp_path: Path) -> None:
    async with tui_app(tmp_path, []) as (app, pilot, _runtime):
        editor = app.query_one(SteeringEditor)
        await type_and_send(pilot, app, "/frobnicate now")
        assert editor.text == "/frobnicate now"
        assert any("unknown command /frobnicate" in n for n in notices(app))
        editor.clear()
        await type_and_send(pilot, app, "bad \udcff byte")
        assert editor.text == "bad \udcff byte" and not app.orchestrator.busy


async def test_a_steer_the_turn_ended_before_folding_in_is_sent_next_and_shown(tmp_path: Path) -> None:
    holder: dict = {}

    def reply_while_steered(_request):
        app = holder["app"]
        app.orchestrator.submit("one more thing")  # typed during the turn's last inference
        return calls(("reply", {"text": "first done"}))

    script = [reply_while_steered, calls(("reply", {"text": "handled the extra"}))]
    async with tui_app(tmp_path, script) as (app, pilot, runtime):
        holder["app"] = app
        await type_and_send(pilot, app, "start")
        await wait_for(pilot, lambda: not app.orchestrator.busy and "handled the extra" in chat_text(app))
        text = chat_text(app)
        assert "steer came too late for this turn; it is sent next: one more thing" in text
        assert "you (re-sent steer): one more thing" in text
        users = [e.text for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert users == ["start", "one more thing"]  # once: the durable copy was re-sent, not duplicated
