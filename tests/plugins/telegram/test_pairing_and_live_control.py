"""Pairing (a 60 s window in which the first private DM claims the bot) and live control
(each change persisted first, then applied to the running channel), from the service and
from the CLI of another process."""

from __future__ import annotations

import json
import os
import stat

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.telegram.bot_token import read_token
from atomic_agent.plugins.telegram.pairing_window import open_window, window_open

from .channel_harness import (
    OWNER,
    STRANGER,
    answering,
    phone_sees,
    reply_texts,
    start_runtime,
    telegram_cli,
    until,
    write_state,
)
from .fake_bot_api import TOKEN

NEW_TOKEN = "987654321:another-token_ABCDEFGHIJKLMNOP"


def config_block(state) -> dict:
    return json.loads((state / "config.json").read_text())["telegram"]


async def test_invariant_5_pairing_bypasses_the_owner_check(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, owner=None)
    runtime = await start_runtime(state, answering({"hello agent": "**paired** and working"}))
    channel = runtime.service("telegram")
    try:
        await until(lambda: channel.status()["state"] == "up", what="up")
        bot_api.send_text(OWNER, "before pairing")  # nobody owns the bot yet: ignored
        channel.start_pairing(60)
        bot_api.send_text(OWNER, "claim", chat_type="group")  # only a private DM can claim
        bot_api.send_text(OWNER, "claim")
        await phone_sees(bot_api, lambda: any(t.startswith("Paired") for t in reply_texts(bot_api)))
        assert config_block(state)["ownerUserId"] == OWNER and not window_open(state)
        bot_api.send_text(STRANGER, "claim too")  # the window closed with the first claim
        bot_api.send_text(OWNER, "hello agent")
        await phone_sees(bot_api, lambda: "<b>paired</b> and working" in bot_api.texts())
        assert not any(m.chat_id == STRANGER for m in bot_api.sent)
    finally:
        await runtime.close()


async def test_an_expired_window_claims_nothing(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, owner=None)
    runtime = await start_runtime(state, ScriptedProvider())
    try:
        open_window(state, 60, now=0)  # closed long ago
        update = bot_api.send_text(OWNER, "claim")
        await phone_sees(bot_api, lambda: bot_api.confirmed_offset > update)
        assert config_block(state)["ownerUserId"] is None and bot_api.sent == []
    finally:
        await runtime.close()


async def test_set_token_persists_to_dotenv_and_restarts_the_channel(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider())
    channel = runtime.service("telegram")
    try:
        await until(lambda: channel.status()["state"] == "up", what="up")
        bot_api.token = NEW_TOKEN  # the bot's token was rotated at BotFather
        status = await channel.set_token(NEW_TOKEN)
        assert read_token(state) == NEW_TOKEN and stat.S_IMODE(os.stat(state / ".env").st_mode) == 0o600
        assert NEW_TOKEN not in (state / "config.json").read_text()
        await until(lambda: channel.status()["state"] == "up", what="up with the new token")
        assert NEW_TOKEN not in json.dumps(status) and status["hasToken"]
        status = await channel.set_token(None)
        assert status["state"] == "down" and status["reason"] == "missing TELEGRAM_BOT_TOKEN"
    finally:
        await runtime.close()


async def test_cli_changes_reach_a_running_channel_at_its_next_cycle(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, poll_timeout_s=1)
    runtime = await start_runtime(state, ScriptedProvider())
    channel = runtime.service("telegram")
    try:
        await until(lambda: channel.status()["state"] == "up", what="up")
        result = telegram_cli(state, "clear-owner")
        assert result.exit_code == 0, result.output
        await until(lambda: channel.owner_user_id is None, what="the owner cleared live")
        result = telegram_cli(state, "status", "--json")
        status = json.loads(result.output)
        assert status["polledByPid"] == os.getpid() and status["hasToken"] and TOKEN not in result.output
        result = telegram_cli(state, "disable")
        assert result.exit_code == 0
        await until(lambda: channel.status()["state"] == "disabled", what="disabled live")
        assert channel.status()["reason"] == "telegram.enabled is false"
    finally:
        await runtime.close()


def test_cli_token_and_clear_token_never_print_the_token(tmp_path) -> None:
    state = write_state(tmp_path / "state", None, token=None)
    result = telegram_cli(state, "token", "--stdin", input=TOKEN + "\n")
    assert result.exit_code == 0 and TOKEN not in result.output
    assert read_token(state) == TOKEN and TOKEN not in (state / "config.json").read_text()
    result = telegram_cli(state, "token", "--stdin", input="hunter2\n")
    assert result.exit_code != 0 and "hunter2" not in result.output
    result = telegram_cli(state, "clear-token")
    assert result.exit_code == 0 and read_token(state) is None


def test_cli_pair_refuses_when_no_runtime_polls(tmp_path) -> None:
    state = write_state(tmp_path / "state", None)
    result = telegram_cli(state, "pair", "--no-wait")
    assert result.exit_code == 1 and "no runtime polls" in result.output
    assert not window_open(state)
