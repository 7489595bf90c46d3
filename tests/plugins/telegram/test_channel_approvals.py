"""Approvals of the channel's session on inline buttons: the owner's click decides, a
timeout denies and edits the message, a cancel resolves it once, nobody else can answer."""

from __future__ import annotations

from atomic_agent.api import ScriptedProvider
from atomic_agent.plugins.telegram.approval_bridge import STALE_TEXTS, TIMED_OUT_TEXT
from atomic_agent.testing.scripted_provider import calls

from .channel_harness import OWNER, STRANGER, GateTools, phone_sees, reply_texts, start_runtime, until, write_state


def ask_then_reply() -> ScriptedProvider:
    return ScriptedProvider([calls(("test.ask", {})), calls(("reply", {"text": "finished"}))])


def button(api, index: int = 0, which: int = 0) -> str:
    return api.keyboards()[index].reply_markup["inline_keyboard"][0][which]["callback_data"]


async def test_an_approval_is_answered_by_the_owner_button(tmp_path, bot_api) -> None:
    tools = GateTools()
    runtime = await start_runtime(write_state(tmp_path / "state", bot_api), ask_then_reply(), tools)
    try:
        bot_api.send_text(OWNER, "clean up")
        await phone_sees(bot_api, lambda: len(bot_api.keyboards()) == 1)
        prompt = bot_api.keyboards()[0]
        assert prompt.parse_mode is None and "delete the build cache" in prompt.text and prompt.chat_id == OWNER
        bot_api.press(OWNER, button(bot_api), prompt.message_id)
        await phone_sees(bot_api, lambda: "finished" in reply_texts(bot_api))
        assert tools.approvals == [True]
        assert any("✅ approved" in e["text"] for e in bot_api.edits)
        metrics = runtime.service("telegram").status()["metrics"]
        assert metrics["approvals_resolved{approved=true,resolver=button}"] == 1
    finally:
        await runtime.close()


async def test_an_unanswered_approval_expires_as_a_denial_and_the_message_says_so(tmp_path, bot_api) -> None:
    tools = GateTools()
    state = write_state(tmp_path / "state", bot_api, approval_timeout_ms=1000)
    runtime = await start_runtime(state, ask_then_reply(), tools)
    try:
        bot_api.send_text(OWNER, "clean up")
        await phone_sees(bot_api, lambda: "finished" in reply_texts(bot_api))
        assert tools.approvals == [False]
        assert [e["text"] for e in bot_api.edits] == [TIMED_OUT_TEXT]
        assert bot_api.edits[0]["reply_markup"] == {"inline_keyboard": []}
        bot_api.press(OWNER, button(bot_api))  # a click after the timeout resolves nothing
        await phone_sees(bot_api, lambda: any(a["text"] == STALE_TEXTS["timeout"] for a in bot_api.callback_answers))
        assert tools.approvals == [False]
        # nobody answered: the durable record says expired, not that the owner denied it
        records = runtime.gate.records
        assert [(r.state, r.answered_by) for r in records.find()] == [("expired", None)]
    finally:
        await runtime.close()


async def test_only_the_live_owner_can_press_the_buttons(tmp_path, bot_api) -> None:
    tools = GateTools()
    runtime = await start_runtime(write_state(tmp_path / "state", bot_api), ask_then_reply(), tools)
    channel = runtime.service("telegram")
    try:
        bot_api.send_text(OWNER, "clean up")
        await phone_sees(bot_api, lambda: len(bot_api.keyboards()) == 1)
        bot_api.press(STRANGER, button(bot_api))
        await phone_sees(bot_api, lambda: len(bot_api.callback_answers) == 1)
        assert bot_api.callback_answers[0]["text"] == "Only the owner can answer approvals."
        assert channel.bridge.pending and tools.approvals == []
        await channel.set_owner(STRANGER)  # ownership moves: the open request is denied
        await until(lambda: tools.approvals == [False], what="the request denied on owner change")
        bot_api.press(OWNER, button(bot_api))  # the previous owner's click is refused
        await phone_sees(bot_api, lambda: len(bot_api.callback_answers) == 2)
        assert bot_api.callback_answers[1]["text"] == "Only the owner can answer approvals."
        assert tools.approvals == [False]
    finally:
        await runtime.close()


async def test_cancel_while_an_approval_waits_resolves_it_once(tmp_path, bot_api) -> None:
    tools = GateTools()
    runtime = await start_runtime(write_state(tmp_path / "state", bot_api), ask_then_reply(), tools)
    try:
        bot_api.send_text(OWNER, "clean up")
        await phone_sees(bot_api, lambda: len(bot_api.keyboards()) == 1)
        bot_api.send_text(OWNER, "/cancel")
        await phone_sees(bot_api, lambda: any("approval(s) cancelled" in t for t in reply_texts(bot_api)))
        await phone_sees(bot_api, lambda: any("cancelled" in e["text"] for e in bot_api.edits))
        bot_api.press(OWNER, button(bot_api))
        await phone_sees(bot_api, lambda: any(a["text"] == STALE_TEXTS["cancel"] for a in bot_api.callback_answers))
        assert tools.approvals in ([], [False])  # the turn may end before the tool hears the denial
        metrics = runtime.service("telegram").status()["metrics"]
        assert sum(v for k, v in metrics.items() if k.startswith("approvals_resolved")) == 1
    finally:
        await runtime.close()


async def test_invariant_6_approval_routing_is_per_session(tmp_path, bot_api) -> None:
    asked: list[str] = []

    async def host(request) -> bool:
        asked.append(request.session_id)
        return True

    tools = GateTools()
    state = write_state(tmp_path / "state", bot_api)
    from atomic_agent.api import create_runtime

    from .channel_harness import boot_state

    runtime = await create_runtime(boot_context=boot_state(state, tools), provider=ask_then_reply(), ask=host,
                                   serving=True)
    try:
        result = await runtime.run_turn("clean up from the terminal", None, origin="cli")
        assert asked == [result.session_id] and tools.approvals == [True]
        assert bot_api.keyboards() == []
    finally:
        await runtime.close()


async def test_a_stopped_channel_gives_its_session_back_to_the_host(tmp_path, bot_api) -> None:
    runtime = await start_runtime(write_state(tmp_path / "state", bot_api), ScriptedProvider())
    channel, gate = runtime.service("telegram"), runtime.service("approval_gate")
    try:
        await until(lambda: channel.status()["state"] == "up", what="up")
        session = channel.session_id()
        assert gate.host_for(session) == channel.bridge.ask
        await channel.set_enabled(False)
        assert gate.host_for(session) is gate.ask
        await channel.set_enabled(True)
        assert gate.host_for(session) == channel.bridge.ask
    finally:
        await runtime.close()
