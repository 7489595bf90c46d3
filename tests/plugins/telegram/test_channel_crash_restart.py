"""Kill -9 the runtime at the three points where a Telegram message could be lost or
doubled, restart it, and count what the phone got and what the agent ran:

- between a chunk's `attempting` and Telegram's answer: the reply is `uncertain` after the
  restart, visible in status, and not resent (the phone has it at most once);
- after the reply was recorded, before its send: the restart sends it exactly once;
- after a message's turn was admitted, before the update was confirmed: Telegram hands the
  update out again and the message still runs once (its idempotency key finds the turn);
- after a message steered the running turn, before the update was confirmed: the same, the
  steer's key committed with it finds the turn the steer ended up in.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from atomic_agent.plugins.telegram.bot_token import bot_id_of
from atomic_agent.plugins.telegram.delivery_store import DeliveryStore
from atomic_agent.plugins.telegram.session_pointer import read_pointer

from .channel_harness import OWNER, write_state
from .fake_bot_api import TOKEN, FakeBotApi

ROOT = Path(__file__).resolve().parents[3]


def spawn(state: Path, crash_point: str | None = None, delay_s: float | None = None) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-m", "tests.plugins.telegram.channel_child", str(state)]
    if crash_point or delay_s is not None:
        args.append(crash_point or "")
    if delay_s is not None:
        args.append(str(delay_s))
    log = open(state / "child.log", "ab")
    return subprocess.Popen(args, cwd=ROOT, stdout=log, stderr=log, env={**os.environ, "PYTHONUNBUFFERED": "1"})


def stop(child: subprocess.Popen[bytes]) -> None:
    if child.poll() is None:
        child.send_signal(signal.SIGTERM)
        try:
            child.wait(30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def deliveries(state: Path) -> dict[str, int]:
    store = DeliveryStore.of_state_dir(state, lambda: bot_id_of(TOKEN))  # the harness's bot
    try:
        return store.counts()
    finally:
        store.close()


def telegram_turns(state: Path) -> list[tuple[str, str]]:
    """(origin, text) of every turn of the channel's session, in admission order."""
    from atomic_agent.turns.session_backends import DEFAULT_BACKEND

    store = DEFAULT_BACKEND.open_store(state)
    try:
        ledger = DEFAULT_BACKEND.ledger(store, "test-reader")
        return [(t.origin, t.text) for t in ledger.lane(read_pointer(state))]
    finally:
        store.close()


def test_kill_mid_send_leaves_the_reply_uncertain_and_it_is_never_resent(tmp_path) -> None:
    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="plain", poll_timeout_s=1)
    child = spawn(state)
    try:
        api.hold_sends()
        api.send_text(OWNER, "first question")
        api.held.wait(60)
        assert api.held.is_set(), (state / "child.log").read_text()
        child.kill()  # SIGKILL while Telegram holds the chunk: attempting, no evidence
        child.wait()
        api.release_sends()  # Telegram did show it
        api.wait_until(lambda: api.texts() == ["first answer"])
        restarted = spawn(state)
        try:
            api.send_text(OWNER, "second question")
            api.wait_until(lambda: "second answer" in api.texts(), 60)
            assert api.texts() == ["first answer", "second answer"]  # the first was not resent
        finally:
            stop(restarted)
        counts = deliveries(state)
        assert (counts["uncertain"], counts["delivered"]) == (1, 1)
        out = subprocess.run([sys.executable, "-m", "atomic_agent.cli.main", "--state-dir", str(state), "telegram",
                              "status", "--json"], cwd=ROOT, capture_output=True, text=True, check=True)
        status = json.loads(out.stdout)
        assert [d["state"] for d in status["needsAttention"]] == ["uncertain"]
    finally:
        stop(child)
        api.close()


def test_kill_before_the_send_resends_the_recorded_reply_exactly_once(tmp_path) -> None:
    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="plain", poll_timeout_s=1)
    child = spawn(state, "DeliveryStore.mark_attempting")
    try:
        api.send_text(OWNER, "first question")
        child.wait(60)
        assert child.returncode == -signal.SIGKILL, (state / "child.log").read_text()
        assert api.sent == [] and deliveries(state)["pending"] == 1
        restarted = spawn(state)
        try:
            api.wait_until(lambda: api.texts() == ["first answer"], 60)
            api.send_text(OWNER, "second question")  # the restarted channel goes on normally
            api.wait_until(lambda: "second answer" in api.texts(), 60)
            assert api.texts() == ["first answer", "second answer"]
        finally:
            stop(restarted)
        assert deliveries(state)["delivered"] == 2
        assert [text for origin, text in telegram_turns(state) if origin == "telegram"] == \
            ["first question", "second question"]
    finally:
        stop(child)
        api.close()


def test_kill_after_admission_before_the_update_is_confirmed_runs_the_message_once(tmp_path) -> None:
    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="plain", poll_timeout_s=1)
    child = spawn(state, "DeliveryStore.open_reply")
    try:
        update = api.send_text(OWNER, "first question")
        child.wait(60)
        assert child.returncode == -signal.SIGKILL, (state / "child.log").read_text()
        assert api.confirmed_offset <= update  # Telegram will hand the update out again
        restarted = spawn(state)
        try:
            api.wait_until(lambda: api.texts() == ["first answer"], 60)
            api.wait_until(lambda: api.confirmed_offset > update, 60)
        finally:
            stop(restarted)
        turns = telegram_turns(state)
        assert [text for origin, text in turns if origin == "telegram"] == ["first question"]
        assert api.texts() == ["first answer"]
    finally:
        stop(child)
        api.close()


def test_kill_after_a_steer_before_the_update_is_confirmed_runs_the_message_once(tmp_path) -> None:
    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="plain", poll_timeout_s=1)
    child = spawn(state, "DeliveryStore.mark_handled:steer", delay_s=3.0)
    try:
        api.send_text(OWNER, "first question")
        api.wait_until(lambda: telegram_turns(state) != [], 60)  # its turn is running (answers take 3 s)
        update = api.send_text(OWNER, "also this")  # steers that turn; the child dies before confirming
        child.wait(60)
        assert child.returncode == -signal.SIGKILL, (state / "child.log").read_text()
        assert api.confirmed_offset <= update  # Telegram will hand the steer's update out again
        restarted = spawn(state)
        try:
            api.wait_until(lambda: "also answered" in api.texts(), 60)
            api.wait_until(lambda: api.confirmed_offset > update, 60)
            api.send_text(OWNER, "second question")  # a later message goes through once more
            api.wait_until(lambda: "second answer" in api.texts(), 60)
        finally:
            stop(restarted)
        texts = [text for _origin, text in telegram_turns(state)]
        assert texts.count("also this") <= 1 and texts.count("first question") == 1
        # one reply per turn: the first question's, the steer's (a turn of its own after the
        # restart) and the later message's (the scripted model answers a prompt by its newest
        # request, so the first turn, resumed after the steer's turn was queued, says "also answered")
        assert len(api.texts()) == 3 and api.texts()[-1] == "second answer", api.texts()
        with sqlite3.connect(state / "sessions.sqlite") as db:
            assert db.execute("select count(*) from steer_queue").fetchone()[0] == 0
            users = [r[0] for r in db.execute("select text from transcript where kind = 'user'")]
        assert users.count("also this") == 1, users  # the agent read the message exactly once
    finally:
        stop(child)
        api.close()


def test_a_graceful_stop_waits_for_the_send_on_the_wire_and_records_it_delivered(tmp_path) -> None:
    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="plain", poll_timeout_s=1)
    child = spawn(state)
    try:
        api.hold_sends()
        api.send_text(OWNER, "first question")
        api.held.wait(60)
        assert api.held.is_set(), (state / "child.log").read_text()
        child.send_signal(signal.SIGTERM)  # stop while Telegram is answering the chunk
        time.sleep(1.0)
        assert child.poll() is None  # still waiting for the answer
        api.release_sends()
        child.wait(30)
        assert api.texts() == ["first answer"]
        counts = deliveries(state)
        assert (counts["delivered"], counts["uncertain"]) == (1, 0)
    finally:
        stop(child)
        api.close()
