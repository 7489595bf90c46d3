"""Keys typed right after answering an approval, while its modal is still closing, belong to
the chat: they never answer the (already answered) modal a second time, never close another
screen, and never stop the running turn; what was typed reaches the editor."""

from __future__ import annotations

from pathlib import Path

from textual import events

from atomic_agent.plugins.tui.approval_modal import ApprovalModal
from tests.plugins.tui.tui_harness import calls, chat_text, held, shown, tui_app, wait_for


async def test_keys_typed_while_the_answered_modal_closes_do_not_stop_the_turn(tmp_path: Path) -> None:
    script = [calls(("t.gated", {"path": "one"})), calls(("t.read", {"path": "slow"})),
              calls(("reply", {"text": "finished"}))]
    log, release = held("slow")
    async with tui_app(tmp_path, script, log=log) as (app, pilot, runtime):
        editor = app.query_one("#editor")
        editor.insert("go")
        await pilot.press("enter")
        await wait_for(pilot, lambda: shown(app, ApprovalModal))
        # a burst as a terminal delivers it: the answer and the next words in one read
        for char in "yalso say thanks":
            app.post_message(events.Key("space" if char == " " else char, char))
        app.post_message(events.Key("enter", "\r"))
        await wait_for(pilot, lambda: not isinstance(app.screen, ApprovalModal))
        await wait_for(pilot, lambda: "also say thanks" in chat_text(app))  # sent while t.read still runs
        release.set()
        await wait_for(pilot, lambda: not app.orchestrator.busy)
        result = app.orchestrator.last_result
        assert result.status == "done" and result.reply == "finished", chat_text(app)
        assert runtime.gate.grants_snapshot() == []  # the stray "a" and "s" granted nothing
        assert len(app.screen_stack) == 1 and editor.text == ""  # no other screen was closed
        text = chat_text(app)
        assert "also say thanks" in text, text  # the words typed on reached the chat, as a steer
        rows = [e.text for e in runtime.sessions.entries(app.orchestrator.session_id) if e.kind == "user"]
        assert rows == ["go", "also say thanks"]
