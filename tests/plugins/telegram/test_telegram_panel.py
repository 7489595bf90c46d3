"""The TUI's Telegram panel against a real runtime serving the channel and the fake Bot API on
loopback: enable/disable, the masked token field, pairing with a countdown (claimed by a
DM), clearing the owner, buttons doing what the keys do, and notices for bad input."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from textual.widgets import Input, Static

import atomic_agent.plugins.telegram as telegram_plugin
from atomic_agent.api import runtime_for_test
from atomic_agent.plugins.telegram.bot_token import read_token
from tests.plugins.tui_panel_host import PanelHost, panel_of

from .channel_harness import OWNER, until, write_state
from .fake_bot_api import TOKEN

NEW_TOKEN = "987654321:another-token_ABCDEFGHIJKLMNOP"


async def _runtime(state: Path):
    return await runtime_for_test(state, plugins={"telegram": telegram_plugin}, serving=True)


def _status(app: PanelHost) -> str:
    return str(app.query_one("#tg-status", Static).render())


def _every_text(app: PanelHost) -> str:
    """Everything the panel and the host ever showed: the token must be in none of it."""
    return _status(app) + "\n".join(app.messages()) + "\n".join(app.job_titles)


async def test_enable_token_and_disable_by_keys_with_the_token_never_shown(tmp_path: Path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, enabled=False, token=None)
    runtime = await _runtime(state)
    try:
        app = PanelHost(panel_of(runtime, "telegram"), runtime)
        async with app.run_test(size=(160, 30)) as pilot:
            assert "channel: disabled" in _status(app) and "token: missing" in _status(app)
            await pilot.press("e")
            await app.settle(pilot)
            assert json.loads((state / "config.json").read_text())["telegram"]["enabled"] is True
            assert any("missing TELEGRAM_BOT_TOKEN" in m for m in app.messages("warning")), app.notices

            await pilot.press("t")
            await pilot.pause()
            field = app.screen.query_one("#tg-token-input", Input)
            assert field.password  # masked while typed
            field.value = "not-a-token"
            await pilot.press("enter")
            await pilot.pause()
            assert any("Token not saved" in m and "not a Telegram bot token" in m for m in app.messages("error"))
            assert read_token(state) is None and "not-a-token" not in _every_text(app)

            bot_api.token = NEW_TOKEN
            await pilot.press("t")
            await pilot.pause()
            app.screen.query_one("#tg-token-input", Input).value = NEW_TOKEN
            await pilot.press("enter")
            await app.settle(pilot)
            assert read_token(state) == NEW_TOKEN and stat.S_IMODE(os.stat(state / ".env").st_mode) == 0o600
            channel = runtime.service("telegram")
            await until(lambda: channel.status()["state"] == "up", what="up with the token")
            await pilot.press("r")
            assert "channel: up" in _status(app) and "token: stored in .env" in _status(app)
            assert NEW_TOKEN not in _every_text(app) and NEW_TOKEN not in (state / "config.json").read_text()

            await pilot.press("e")
            await app.settle(pilot)
            assert "channel: disabled" in _status(app)
            assert json.loads((state / "config.json").read_text())["telegram"]["enabled"] is False
    finally:
        await runtime.close()


async def test_pairing_counts_down_is_claimed_by_a_dm_and_the_owner_can_be_cleared(tmp_path: Path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, owner=None)
    runtime = await _runtime(state)
    channel = runtime.service("telegram")
    try:
        await until(lambda: channel.status()["state"] == "up", what="up")
        app = PanelHost(panel_of(runtime, "telegram"), runtime)
        async with app.run_test(size=(160, 30)) as pilot:
            assert "owner: nobody" in _status(app) and "pairing: closed" in _status(app)
            await pilot.click("#tg-pair")  # the button runs the same action as p
            assert "pairing: open, 60 s left" in _status(app) or "pairing: open, 59 s left" in _status(app)
            await pilot.press("p")  # p again closes it
            assert "pairing: closed" in _status(app)
            await pilot.press("p")
            bot_api.send_text(OWNER, "claim")
            await until(lambda: channel.status()["ownerUserId"] == OWNER, what="the DM claims the bot")
            await pilot.press("r")
            assert f"owner: {OWNER}" in _status(app) and "pairing: closed" in _status(app)

            await pilot.press("o", "n")  # declined
            assert channel.status()["ownerUserId"] == OWNER
            await pilot.click("#tg-clear-owner")
            await pilot.press("y")
            await app.settle(pilot)
            assert channel.status()["ownerUserId"] is None and "owner: nobody" in _status(app)
            assert json.loads((state / "config.json").read_text())["telegram"]["ownerUserId"] is None
    finally:
        await runtime.close()


async def test_pairing_needs_the_channel_up_and_says_so(tmp_path: Path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, enabled=False, token=TOKEN, owner=None)
    runtime = await _runtime(state)
    try:
        app = PanelHost(panel_of(runtime, "telegram"), runtime)
        async with app.run_test(size=(160, 30)) as pilot:
            await pilot.press("p")
            assert any("Cannot pair" in m and "disabled" in m for m in app.messages("error")), app.notices
            assert "pairing: closed" in _status(app)
            await pilot.press("o")
            assert any("The bot has no owner" in m for m in app.messages())
            await pilot.press("x", "y")  # clear the stored token (confirmed)
            await app.settle(pilot)
            assert read_token(state) is None and "token: missing" in _status(app)
            await pilot.press("x")
            assert any("No bot token is stored" in m for m in app.messages())
    finally:
        await runtime.close()
