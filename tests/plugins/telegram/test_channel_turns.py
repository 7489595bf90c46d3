"""End to end over the loopback Bot API: messages become turns of the channel's own
session, replies come back formatted, commands answer plain, the owner check holds."""

from __future__ import annotations

import asyncio

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.telegram.session_pointer import read_pointer
from atomic_agent.testing.scripted_provider import calls

from .channel_harness import OWNER, STRANGER, GateTools, phone_sees, reply_texts, start_runtime, until, write_state


def reply(text: str) -> str:
    return calls(("reply", {"text": text}))


async def test_a_message_becomes_a_turn_and_its_reply_comes_back_as_html(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider([reply("**Done**: see `notes.txt`")])
    runtime = await start_runtime(state, provider)
    try:
        bot_api.send_text(OWNER, "summarise my notes")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        sent = bot_api.sent[0]
        assert (sent.chat_id, sent.parse_mode, sent.text) == (OWNER, "HTML", "<b>Done</b>: see <code>notes.txt</code>")
        session_id = read_pointer(state)
        turns = runtime.lifecycle.ledger.lane(session_id)
        assert [(t.origin, t.state) for t in turns] == [("telegram", "completed")]
        assert "summarise my notes" in provider.requests[0].prompt
        await until(lambda: runtime.service("telegram").store.counts()["delivered"] == 1, what="delivered")
        assert runtime.service("telegram").status()["metrics"]["messages_received"] == 1
    finally:
        await runtime.close()


async def test_plain_parse_mode_sends_the_model_text_unformatted(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, parse_mode="plain")
    runtime = await start_runtime(state, ScriptedProvider([reply("**raw** <b>")]))
    try:
        bot_api.send_text(OWNER, "hi")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        assert (bot_api.sent[0].text, bot_api.sent[0].parse_mode) == ("**raw** <b>", None)
    finally:
        await runtime.close()


async def test_messages_from_anyone_but_the_owner_are_ignored_and_counted(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider([reply("for the owner")])
    runtime = await start_runtime(state, provider)
    try:
        bot_api.send_text(STRANGER, "run rm -rf /")
        bot_api.send_text(OWNER, "hello", chat_type="group")  # the owner, but not in a private chat
        bot_api.send_text(OWNER, "hello")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        assert bot_api.sent[0].chat_id == OWNER
        assert "hello" in provider.requests[0].prompt
        assert not any("rm -rf" in r.prompt for r in provider.requests)
        metrics = runtime.service("telegram").status()["metrics"]
        assert metrics["ignored{reason=not_owner}"] == 2
    finally:
        await runtime.close()


async def test_without_an_owner_every_message_is_ignored(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api, owner=None)
    provider = ScriptedProvider()
    runtime = await start_runtime(state, provider)
    try:
        update = bot_api.send_text(OWNER, "hello")
        await phone_sees(bot_api, lambda: bot_api.confirmed_offset > update)
        assert bot_api.sent == [] and provider.requests == []
    finally:
        await runtime.close()


async def test_slash_commands_answer_plain_and_new_rotates_only_the_channel_session(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider())
    try:
        bot_api.send_text(OWNER, "/help")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        assert "/cancel" in bot_api.sent[0].text and bot_api.sent[0].parse_mode is None
        first = read_pointer(state)
        other = runtime.open_session(None).id  # a CLI/TUI session of the same runtime
        bot_api.send_text(OWNER, "/new")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 2)
        second = read_pointer(state)
        assert second not in (first, other) and "New conversation" in bot_api.sent[1].text
        bot_api.send_text(OWNER, "/status@atomic_test_bot")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 3)
        assert f"Session: {second}" in bot_api.sent[2].text and bot_api.sent[2].parse_mode is None
        bot_api.send_text(OWNER, "/cancel")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 4)
        assert bot_api.sent[3].text == "Nothing is running."
        assert {c["command"] for c in bot_api.commands} == {"help", "status", "new", "cancel"}
    finally:
        await runtime.close()


async def test_cancel_mid_turn_stops_the_running_turn(tmp_path, bot_api) -> None:
    tools = GateTools()
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider([calls(("test.wait", {}))]), tools)
    try:
        bot_api.send_text(OWNER, "wait for me")
        await asyncio.wait_for(tools.entered.wait(), 30)
        bot_api.send_text(OWNER, "/cancel")  # the polling loop is not blocked by the running turn
        await phone_sees(bot_api, lambda: "Turn cancelled." in reply_texts(bot_api))
        assert "Stopping the running turn." in reply_texts(bot_api)
        turns = runtime.lifecycle.ledger.lane(read_pointer(state))
        assert [t.state for t in turns] == ["stopped"]
    finally:
        tools.release.set()
        await runtime.close()


async def test_a_message_while_a_turn_runs_steers_it(tmp_path, bot_api) -> None:
    tools = GateTools()
    state = write_state(tmp_path / "state", bot_api)
    provider = ScriptedProvider([calls(("test.wait", {})), reply("took your note into account")])
    runtime = await start_runtime(state, provider, tools)
    try:
        bot_api.send_text(OWNER, "start a long job")
        await asyncio.wait_for(tools.entered.wait(), 30)
        update = bot_api.send_text(OWNER, "also use the staging server")
        await phone_sees(bot_api, lambda: bot_api.confirmed_offset > update)  # the steer is durable
        tools.release.set()
        await phone_sees(bot_api, lambda: "took your note into account" in reply_texts(bot_api))
        assert "also use the staging server" in provider.requests[1].prompt
        turns = runtime.lifecycle.ledger.lane(read_pointer(state))
        assert len(turns) == 1  # the steer joined the running turn; it was not a second turn
    finally:
        tools.release.set()
        await runtime.close()


async def test_a_long_reply_is_chunked_with_emoji_at_the_boundary(tmp_path, bot_api) -> None:
    long = "a" * 4095 + "\U0001F600" + "b" * 10
    state = write_state(tmp_path / "state", bot_api, parse_mode="plain")
    runtime = await start_runtime(state, ScriptedProvider([reply(long)]))
    try:
        bot_api.send_text(OWNER, "long please")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 2)
        assert [m.text for m in bot_api.sent] == ["a" * 4095, "\U0001F600" + "b" * 10]
        store = runtime.service("telegram").store
        await until(lambda: store.counts()["delivered"] == 1, what="the delivery is recorded")
        record = store.in_state("delivered")[0]
        assert record.chunks_total == 2 and record.message_ids == (1, 2)
        assert runtime.service("telegram").status()["metrics"]["messages_sent{kind=reply}"] == 1
    finally:
        await runtime.close()


async def test_an_html_chunk_counts_its_visible_text_against_the_limit(tmp_path, bot_api) -> None:
    body = "&" * 4000 + "\n**" + "b" * 90 + "**"  # escaping makes the HTML 5x longer; Telegram counts 4,091
    state = write_state(tmp_path / "state", bot_api)
    runtime = await start_runtime(state, ScriptedProvider([reply(body)]))
    try:
        bot_api.send_text(OWNER, "escape please")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 1)
        sent = bot_api.sent[0]
        assert sent.parse_mode == "HTML" and sent.text == "&amp;" * 4000 + "\n<b>" + "b" * 90 + "</b>"
    finally:
        await runtime.close()
