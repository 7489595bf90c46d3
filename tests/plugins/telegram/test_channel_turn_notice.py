"""A plugin's end-of-turn notice (the worktree diffstat's shape) reaches the Telegram owner as
a plain message right after the reply, never inside it."""

from __future__ import annotations

from atomic_agent.api import ScriptedProvider, boot_for_test, create_runtime
from atomic_agent.testing.scripted_provider import calls
from tests.agent.turn_notice_kit import NOTICE, NoticePlugin

from .channel_harness import OWNER, phone_sees, write_state


async def test_the_turn_notice_follows_the_reply_as_a_plain_message(tmp_path, bot_api) -> None:
    state = write_state(tmp_path / "state", bot_api)
    ctx = boot_for_test(state, plugins={"notice": NoticePlugin()}, installed=True, environ={})
    runtime = await create_runtime(boot_context=ctx, provider=ScriptedProvider([calls(("reply", {"text": "Edited."}))]),
                                   serving=True)
    try:
        bot_api.send_text(OWNER, "edit the notes")
        await phone_sees(bot_api, lambda: len(bot_api.sent) == 2)
        first, second = bot_api.sent
        assert (first.chat_id, first.text) == (OWNER, "Edited.")
        assert (second.chat_id, second.text, second.parse_mode) == (OWNER, NOTICE, None)
    finally:
        await runtime.close()
