"""Issue 32 on Telegram: kill -9 the channel's process while an approval waits on the
owner's buttons; the restarted process parks the turn, shows the same pending approval on
the phone again, and pressing Approve there runs the frozen call exactly once and resumes
the conversation from its result."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from atomic_agent.plugins.telegram.session_pointer import read_pointer

from .channel_harness import OWNER, write_state
from .fake_bot_api import FakeBotApi
from .test_channel_crash_restart import ROOT, stop


def spawn_gated(state: Path) -> subprocess.Popen[bytes]:
    log = open(state / "child.log", "ab")
    return subprocess.Popen([sys.executable, "-m", "tests.plugins.telegram.channel_child", str(state)], cwd=ROOT,
                            stdout=log, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1", "CHILD_GATE": "1"})


def approve_button(message: object) -> str:
    return str(message.reply_markup["inline_keyboard"][0][0]["callback_data"])  # type: ignore[attr-defined]


def test_a_restart_shows_the_parked_approval_again_and_its_button_resumes_the_turn_once(tmp_path) -> None:
    from atomic_agent.approval.approval_records import ApprovalRecords
    from atomic_agent.turns.session_backends import DEFAULT_BACKEND

    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="plain", poll_timeout_s=1)
    child = spawn_gated(state)
    restarted = None
    try:
        api.send_text(OWNER, "needs approval")
        api.wait_until(lambda: len(api.keyboards()) == 1, 60)
        child.send_signal(signal.SIGKILL)  # the approval is pending on the phone
        child.wait()
        restarted = spawn_gated(state)
        api.wait_until(lambda: len(api.keyboards()) == 2, 60)  # shown again after the restart
        first, again = api.keyboards()
        assert "delete the build cache" in again.text and again.chat_id == OWNER
        api.press(OWNER, approve_button(again), again.message_id)
        api.wait_until(lambda: any("after the approval" in t for t in api.texts()), 60)
        assert [t for t in api.texts() if "after the approval" in t] == ["after the approval: approved and done"]
    finally:
        if restarted is not None:
            stop(restarted)
        stop(child)
        api.close()
    log = (state / "child.log").read_text()
    store = DEFAULT_BACKEND.open_store(state)
    try:
        sid = read_pointer(state)
        results = [(e.tool, e.text) for e in store.entries(sid) if e.kind == "tool_result"]
        assert results == [("test.ask", "approved and done")], log  # the frozen call ran exactly once
        ledger = DEFAULT_BACKEND.ledger(store, "test-reader")
        states = [t.state for t in ledger.lane(sid)]
        assert states[0] == "resumed" and "telegram" in (ledger.lane(sid)[0].reason or ""), (states, log)
    finally:
        store.close()
    records = ApprovalRecords.for_state_dir(state)
    try:
        (record,) = records.find()
        assert (record.state, record.surface, record.used_at is not None) == ("approved", "telegram", True)
    finally:
        records.close()
