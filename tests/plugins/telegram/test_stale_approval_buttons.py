"""Class: an approval button pressed after a restart. It answered "Already answered." although
nobody had answered — the request had expired with the process that asked it. The fate of
each prompt is kept in telegram.sqlite, so the press is told which case it is: answered (and
by whom), timed out, denied when the agent stopped, or expired with a restart."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from atomic_agent.plugins.telegram.approval_bridge import (
    RESTARTED_TEXT,
    STALE_TEXTS,
    UNKNOWN_TEXT,
    keyboard,
    stale_text,
)

from .channel_harness import OWNER, GateTools, phone_sees, reply_texts, start_runtime, write_state
from .test_channel_approvals import ask_then_reply, button


def _row(state_dir: Path, token: str, state: str, resolver: str | None) -> None:
    with sqlite3.connect(state_dir / "telegram.sqlite") as conn:
        conn.execute("INSERT INTO telegram_approval_requests (token, chat_id, state, resolver, created_at, updated_at) "
                     "VALUES (?, ?, ?, ?, 1, 9999999999999)", (token, OWNER, state, resolver))


async def test_stale_approval_answered_before_a_restart_says_by_whom(tmp_path, bot_api) -> None:
    tools = GateTools()
    state = write_state(tmp_path / "state", bot_api)
    first = await start_runtime(state, ask_then_reply(), tools)
    try:
        bot_api.send_text(OWNER, "clean up")
        await phone_sees(bot_api, lambda: len(bot_api.keyboards()) == 1)
        bot_api.press(OWNER, button(bot_api), bot_api.keyboards()[0].message_id)
        await phone_sees(bot_api, lambda: "finished" in reply_texts(bot_api))
    finally:
        await first.close()
    second = await start_runtime(state, ask_then_reply(), GateTools())
    try:
        bot_api.press(OWNER, button(bot_api, which=1), bot_api.keyboards()[0].message_id)  # Deny, after the restart
        await phone_sees(bot_api, lambda: len(bot_api.callback_answers) == 2)
        assert bot_api.callback_answers[1]["text"] == "Already answered: approved by the owner."
        assert tools.approvals == [True]
    finally:
        await second.close()


@pytest.mark.parametrize(("state", "resolver", "expected"), [
    ("open", None, RESTARTED_TEXT),  # the asking process died (kill -9) before anything settled it
    ("denied", "channel_stopped", STALE_TEXTS["channel_stopped"]),
    ("denied", "timeout", STALE_TEXTS["timeout"]),
    ("denied", "cancel", STALE_TEXTS["cancel"]),
    ("denied", "button", "Already answered: denied by the owner."),
    (None, None, UNKNOWN_TEXT),  # never asked from this state dir, or forgotten
])
async def test_stale_approval_after_a_restart_says_what_happened(tmp_path, bot_api, state, resolver,
                                                                  expected) -> None:
    state_dir = write_state(tmp_path / "state", bot_api)
    tools = GateTools()
    runtime = await start_runtime(state_dir, ask_then_reply(), tools)
    try:
        if state is not None:
            _row(state_dir, "oldtoken", state, resolver)
        data = keyboard("oldtoken")["inline_keyboard"][0][0]["callback_data"]  # Approve
        bot_api.press(OWNER, data, 4242)
        await phone_sees(bot_api, lambda: len(bot_api.callback_answers) == 1)
        assert bot_api.callback_answers[0]["text"] == expected
        assert "Already answered" not in expected or resolver == "button"
        if resolver != "button":  # the old prompt's buttons are closed with the same words
            await phone_sees(bot_api, lambda: any(expected in e["text"] for e in bot_api.edits))
        assert tools.approvals == []  # nothing ran
    finally:
        await runtime.close()


def test_stale_approval_texts_never_claim_an_answer_nobody_gave() -> None:
    for resolver in ("timeout", "cancel", "owner_changed", "channel_stopped", "send_failed", None, "odd"):
        for state in ("open", "denied", None):
            assert "Already answered" not in stale_text(state, resolver)
    assert stale_text("approved", "button") == "Already answered: approved by the owner."
