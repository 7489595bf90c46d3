"""The Telegram channel's locked invariants that no other test file names: 1 (the polling
carve-out), 2 (updates only through runtime.run_turn), 3 (the token never leaves),
4 (always constructed), 7 (one HTTP client module), 8 (only agent replies are formatted).
5, 6, 9 and 10 are pinned beside their scenarios (test_pairing_and_live_control,
test_channel_approvals, test_markdown_html, test_channel_faults)."""

from __future__ import annotations

import ast
import io
import json
from contextlib import redirect_stderr
from pathlib import Path

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins import telegram as telegram_plugin
from atomic_agent.testing.scripted_provider import calls

from .channel_harness import OWNER, GateTools, phone_sees, reply_texts, start_runtime, until, write_state
from .fake_bot_api import TOKEN

PLUGIN_DIR = Path(telegram_plugin.__file__).parent


def modules() -> dict[str, ast.Module]:
    return {path.name: ast.parse(path.read_text()) for path in sorted(PLUGIN_DIR.glob("*.py"))}


def test_invariant_1_the_polling_loop_is_the_plugins_only_periodic_loop() -> None:
    loops, pollers, timers = [], [], []
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.While) and isinstance(node.test, ast.Constant) and node.test.value is True:
                loops.append(name)
            if isinstance(node, ast.Attribute) and node.attr == "get_updates" and name != "bot_api.py":
                pollers.append(name)
            if isinstance(node, ast.Attribute) and node.attr in ("call_later", "call_at", "Timer", "create_task"):
                timers.append(name)
    # outbound_sender's loop is one send's bounded retries (429 / 5xx / parse fallback), not periodic work;
    # polling_link's second is the fleet poller lease's watch (only on a fleet's database): a standby
    # tries the lease, a poller checks it still holds it while a long poll is open
    assert sorted(loops) == ["outbound_sender.py", "polling_link.py", "polling_link.py"]
    assert pollers == ["polling_link.py"] and timers == []


def test_invariant_7_httpx_is_imported_by_one_module_only() -> None:
    importers = set()
    for name, tree in modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "httpx" for a in node.names):
                importers.add(name)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "httpx":
                importers.add(name)
    assert importers == {"bot_api.py"}


async def test_invariant_2_updates_always_go_through_runtime_run_turn(tmp_path, bot_api) -> None:
    tools = GateTools()
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider([calls(("test.wait", {}))]), tools)
    seen: list[tuple[str, str]] = []
    original = runtime.run_turn

    async def recording(text, session_id=None, on_event=None, **kwargs):
        seen.append((text, kwargs.get("origin")))
        return await original(text, session_id, on_event, **kwargs)

    runtime.run_turn = recording
    try:
        bot_api.send_text(OWNER, "first")
        await until(lambda: tools.entered.is_set(), what="the turn runs")
        steer = bot_api.send_text(OWNER, "a steer")
        await phone_sees(bot_api, lambda: bot_api.confirmed_offset > steer)
        tools.release.set()
        await phone_sees(bot_api, lambda: len(reply_texts(bot_api)) == 1)
        channel = runtime.service("telegram")
        ledger = runtime.lifecycle.ledger.lane(channel.session_id())
        assert seen == [("first", "telegram")]
        assert [(t.text, t.origin) for t in ledger] == [("first", "telegram")]  # the steer joined it
    finally:
        tools.release.set()
        await runtime.close()


async def test_invariant_3_the_token_never_leaves_env(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    stderr = io.StringIO()
    with redirect_stderr(stderr):
        runtime = await start_runtime(state, ScriptedProvider([calls(("reply", {"text": "ok"}))]))
        channel = runtime.service("telegram")
        try:
            bot_api.send_text(OWNER, "hello")
            await phone_sees(bot_api, lambda: reply_texts(bot_api) == ["ok"])
            status_up = json.dumps(channel.status()) + json.dumps(runtime.channels.status())
            bot_api.revoke()  # errors now carry URLs with the token in them
            await until(lambda: channel.status()["state"] == "down", what="down")
            status_down = json.dumps(channel.status())
            bot_api.close()  # and network errors
            await channel.restart()
            status_restart = json.dumps(channel.status())
        finally:
            await runtime.close()
    assert "unauthorized" in status_down
    for text in (status_up, status_down, status_restart, stderr.getvalue()):
        assert TOKEN not in text and TOKEN.split(":")[1] not in text
    for path in state.rglob("*"):
        if path.is_file() and path.name != ".env":
            assert TOKEN.encode() not in path.read_bytes(), path


async def test_invariant_4_the_channel_is_always_constructed_and_controllable(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, enabled=False, token=None)
    runtime = await start_runtime(state, ScriptedProvider())
    try:
        assert [spec.name for spec in runtime.channels.specs] == ["telegram"]
        channel = runtime.service("telegram")
        assert runtime.channels.running["telegram"] is channel
        assert channel.status()["state"] == "disabled" and bot_api.calls == []
        status = await channel.set_enabled(True)  # no token yet: down with the reason, no crash
        assert (status["state"], status["reason"]) == ("down", "missing TELEGRAM_BOT_TOKEN")
        status = await channel.set_token(TOKEN)
        assert status["state"] == "up"
    finally:
        await runtime.close()


async def test_invariant_8_only_agent_replies_are_formatted(tmp_path, bot_api) -> None:
    def script(request):
        if request.prompt.rfind("please fail") > request.prompt.rfind("please talk"):
            raise RuntimeError("model exploded <b>&")
        return calls(("reply", {"text": "**agent** words"}))

    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider([script] * 20))
    try:
        bot_api.send_text(OWNER, "/help")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        bot_api.send_text(OWNER, "please talk")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 2)
        bot_api.send_text(OWNER, "please fail")
        await phone_sees(bot_api, lambda: any(t.startswith("Turn failed") for t in bot_api.texts()))
        report = await runtime.service("report_sink").send_report("telegram", "Task failed: nightly backup\n\nexit 1 <stderr>")
        assert report is not None and report.state == "delivered"
        formatted = [m.text for m in bot_api.sent if m.parse_mode == "HTML"]
        assert formatted == ["<b>agent</b> words"]
        failure = next(t for t in bot_api.texts() if t.startswith("Turn failed"))
        assert "<b>&" in failure  # sent as-is, plain: no HTML grammar to collide with
        assert bot_api.texts()[-1].startswith("Task failed: nightly backup")
    finally:
        await runtime.close()
