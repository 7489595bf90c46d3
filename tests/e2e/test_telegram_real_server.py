"""End to end: the phone (the loopback fake Bot API) talks to the agent running on the real
llama-server; the message becomes a turn of the channel's session and its reply, whatever
the small model says, comes back once, as a delivered record."""

from __future__ import annotations

from pathlib import Path

import pytest

from atomic_agent.plugins.telegram.session_pointer import read_pointer
from tests.plugins.telegram.channel_harness import OWNER, boot_state, phone_sees, until, write_state
from tests.plugins.telegram.fake_bot_api import FakeBotApi

pytestmark = pytest.mark.llama_server


async def test_a_phone_message_gets_a_real_model_reply(llama_server, tmp_path: Path) -> None:
    from atomic_agent.api import create_runtime

    api = FakeBotApi().start()
    state = write_state(tmp_path / "state", api, parse_mode="html")
    env = {"ATOMIC_AGENT_LLAMA_URL": llama_server.base_url, "ATOMIC_AGENT_MAX_STEPS": "3", "ATOMIC_AGENT_SEED": "7"}
    runtime = await create_runtime(boot_context=boot_state(state, environ=env), environ=env, serving=True)
    try:
        api.send_text(OWNER, "Say hello in five words.")
        await phone_sees(api, lambda: len(api.sent) >= 1, timeout_s=240)
        channel = runtime.service("telegram")
        await until(lambda: channel.store.counts()["delivered"] == 1, timeout_s=60, what="delivered")
        turns = runtime.lifecycle.ledger.lane(read_pointer(state))
        assert [(t.origin, t.text) for t in turns] == [("telegram", "Say hello in five words.")]
        assert all(m.chat_id == OWNER and m.text for m in api.sent)
    finally:
        await runtime.close()
        api.close()
