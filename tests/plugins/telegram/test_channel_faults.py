"""Bad input and a bad network: each a clear status, nothing lost, the runtime unaffected."""

from __future__ import annotations

import json

import pytest

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.telegram.instance_lock import LockHeldError
from atomic_agent.testing.scripted_provider import calls

from .channel_harness import OWNER, answering, phone_sees, reply_texts, start_runtime, until, write_state
from .fake_bot_api import TOKEN, FakeBotApi


def reply(text: str) -> str:
    return calls(("reply", {"text": text}))


def status(runtime) -> dict:
    return runtime.service("telegram").status()


async def test_invariant_10_plain_text_fallback_on_cant_parse_entities(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider([reply("**bold** reply")]))
    try:
        bot_api.fail_next_sends((400, "Bad Request: can't parse entities: unsupported start tag \"b\"", None))
        bot_api.send_text(OWNER, "hi")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        assert [a.get("parse_mode") for a in bot_api.send_attempts] == ["HTML", None]
        assert (bot_api.sent[0].text, bot_api.sent[0].parse_mode) == ("**bold** reply", None)
        await until(lambda: status(runtime)["deliveries"]["delivered"] == 1, what="delivered")
        assert status(runtime)["metrics"]["parse_fallbacks"] == 1
        assert runtime.service("telegram").store.in_state("delivered")[0].parse_fallbacks == 1
    finally:
        await runtime.close()


async def test_429_is_honoured_with_retry_after_and_5xx_is_retried(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, parse_mode="plain")
    runtime = await start_runtime(state, ScriptedProvider([reply("after the storm")]))
    try:
        bot_api.fail_next_sends((429, "Too Many Requests: retry after 1", 1), (502, "Bad Gateway", None))
        bot_api.send_text(OWNER, "hi")
        await phone_sees(bot_api, lambda: reply_texts(bot_api) == ["after the storm"])
        assert len(bot_api.send_attempts) == 3
    finally:
        await runtime.close()


async def test_a_chunk_telegram_refuses_for_good_is_failed_not_retried(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, parse_mode="plain")
    runtime = await start_runtime(state, answering({"alpha-message": "lost cause", "bravo-message": "second"}))
    try:
        bot_api.fail_next_sends((403, "Forbidden: bot was blocked by the user", None))
        bot_api.send_text(OWNER, "alpha-message")
        await until(lambda: status(runtime)["deliveries"]["failed"] == 1, what="failed")
        bot_api.send_text(OWNER, "bravo-message")
        await phone_sees(bot_api, lambda: reply_texts(bot_api) == ["second"])
        failed = runtime.service("telegram").store.in_state("failed")[0]
        assert "blocked" in failed.error
    finally:
        await runtime.close()


async def test_a_revoked_token_takes_the_channel_down_with_the_reason(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider())
    try:
        await until(lambda: status(runtime)["state"] == "up", what="up")
        bot_api.revoke()
        await until(lambda: status(runtime)["state"] == "down", what="down")
        reason = status(runtime)["reason"]
        assert reason.startswith("unauthorized") and TOKEN not in json.dumps(status(runtime))
        result = await runtime.run_turn("still works locally", None, origin="cli")
        assert result.status == "done"  # the runtime is unaffected
    finally:
        await runtime.close()


async def test_a_missing_token_is_down_with_a_reason_not_a_crash(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, token=None)
    runtime = await start_runtime(state, ScriptedProvider())
    try:
        assert (status(runtime)["state"], status(runtime)["reason"]) == ("down", "missing TELEGRAM_BOT_TOKEN")
        assert runtime.channels.status()["telegram"]["state"] == "down"
        assert bot_api.calls == []
    finally:
        await runtime.close()


async def test_a_disabled_channel_is_built_but_never_polls(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, enabled=False)
    runtime = await start_runtime(state, ScriptedProvider([reply("now on")]))
    channel = runtime.service("telegram")
    try:
        assert channel.status()["state"] == "disabled" and bot_api.calls == []
        await channel.set_enabled(True)  # live control: no host restart
        assert json.loads((state / "config.json").read_text())["telegram"]["enabled"] is True
        bot_api.send_text(OWNER, "hello")
        await phone_sees(bot_api, lambda: reply_texts(bot_api) == ["now on"])
        await channel.set_enabled(False)
        assert channel.status()["state"] == "disabled"
    finally:
        await runtime.close()


async def test_network_loss_during_a_long_poll_is_down_then_up_and_nothing_is_lost(tmp_path) -> None:
    first = FakeBotApi().start()
    port = int(first.url.rsplit(":", 1)[1])
    state = write_state(tmp_path / "state", first, parse_mode="plain")
    runtime = await start_runtime(state, ScriptedProvider([reply("back again")]))
    second = None
    try:
        await until(lambda: status(runtime)["state"] == "up", what="up")
        first.close()
        await until(lambda: status(runtime)["state"] == "down", what="down")
        assert status(runtime)["reason"].startswith("unreachable")
        second = FakeBotApi(port=port).start()
        second.send_text(OWNER, "are you there?")
        await phone_sees(second, lambda: second.texts() == ["back again"])
        assert status(runtime)["state"] == "up"
    finally:
        await runtime.close()
        if second is not None:
            second.close()


async def test_a_5xx_on_getupdates_is_a_status_and_polling_recovers(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, parse_mode="plain")
    runtime = await start_runtime(state, ScriptedProvider([reply("fine")]))
    try:
        await until(lambda: status(runtime)["state"] == "up", what="up")
        bot_api.server_errors_on_poll = 1
        bot_api.send_text(OWNER, "hello")
        await phone_sees(bot_api, lambda: reply_texts(bot_api) == ["fine"])
        assert status(runtime)["metrics"]["down{reason=unreachable}"] >= 1
    finally:
        await runtime.close()


async def test_malformed_updates_non_text_and_huge_messages_are_refused_and_confirmed(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider([reply("ok")])
    runtime = await start_runtime(state, provider)
    try:
        bot_api.queue_update({"edited_message": {"text": "?"}})
        bot_api.queue_update({"message": "not an object"})
        bot_api.queue_update({"message": {"from": {"id": "x"}, "chat": {"id": OWNER}, "text": "bad ids"}})
        bot_api.queue_update({"message": {"from": {"id": OWNER}, "chat": {"id": OWNER, "type": "private"},
                                          "photo": [{"file_id": "f"}]}})
        big = bot_api.send_text(OWNER, "x" * (1024 * 1024))
        bot_api.send_text(OWNER, "a real one")
        await phone_sees(bot_api, lambda: "ok" in reply_texts(bot_api) and bot_api.confirmed_offset > big)
        texts = reply_texts(bot_api)
        assert "Only text messages are understood." in texts
        assert any(t.startswith("That message is too long") for t in texts)
        assert not any("x" * 1000 in r.prompt for r in provider.requests)
        metrics = status(runtime)["metrics"]
        assert metrics["ignored{reason=malformed}"] == 3 and metrics["ignored{reason=too_long}"] == 1
    finally:
        await runtime.close()


async def test_a_lone_surrogate_in_a_message_is_refused_before_anything_is_admitted(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider()
    runtime = await start_runtime(state, provider)
    channel = runtime.service("telegram")
    try:
        outcome = await channel.inbound.handle({"update_id": 1, "message": {
            "from": {"id": OWNER}, "chat": {"id": OWNER, "type": "private"}, "text": "bad \udc80 text"}})
        assert outcome == "ignored:invalid_text"
        assert provider.requests == [] and runtime.lifecycle.ledger.lane(channel.session_id()) == []
    finally:
        await runtime.close()


async def test_invariant_lock_held_a_second_runtime_fails_fast(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    first = await start_runtime(state, ScriptedProvider())
    try:
        await until(lambda: status(first)["state"] == "up", what="up")
        second = await start_runtime(state, ScriptedProvider())
        try:
            assert second.channels.status()["telegram"]["state"] == "failed"
            assert "lock_held" in second.channels.status()["telegram"]["error"]
            assert status(second)["state"] == "down" and status(second)["reason"].startswith("lock_held")
            with pytest.raises(LockHeldError):
                await second.service("telegram").start()
        finally:
            await second.close()
        assert status(first)["state"] == "up"
    finally:
        await first.close()


async def test_an_update_the_handler_cannot_handle_is_reported_to_the_owner_not_dropped_silently(
        tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, parse_mode="plain")
    runtime = await start_runtime(state, ScriptedProvider([reply("fine again")]))
    broken = runtime.steer

    def steer_raises(session_id, text, request_key=None):
        runtime.steer = broken  # only the first message breaks
        raise OSError(f"disk gone near bot{TOKEN}")

    runtime.steer = steer_raises
    try:
        bot_api.send_text(OWNER, "one")
        await phone_sees(bot_api, lambda: any(t.startswith("That message could not be handled") for t in
                                              reply_texts(bot_api)))
        assert TOKEN not in " ".join(bot_api.texts())
        bot_api.send_text(OWNER, "two")
        await phone_sees(bot_api, lambda: "fine again" in reply_texts(bot_api))
    finally:
        await runtime.close()
