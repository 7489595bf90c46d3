"""The Telegram ingress checks text before it confirms anything, and confirms an update only
after its turn's admission is committed: for any text, when the update is settled, either
the message is durably admitted exactly as sent or nothing was admitted (Hypothesis)."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path

from hypothesis import given, settings

from atomic_agent.api import ScriptedProvider, text_problem
from atomic_agent.plugins.telegram.inbound_handler import MAX_INBOUND_CHARS
from tests.turns.ingress_texts import admitted_texts, texts

from .channel_harness import OWNER, start_runtime, write_state


def _deliver(text: str) -> tuple[str, list[list[str]], list[str]]:
    """One update with `text` through a fresh runtime's handler: its outcome, what was durable
    each time an update was confirmed, and what is durable at the end."""
    with tempfile.TemporaryDirectory() as tmp:
        state = write_state(Path(tmp) / "state", None, enabled=False)

        async def go() -> tuple[str, list[list[str]]]:
            runtime = await start_runtime(state, ScriptedProvider())
            channel = runtime.service("telegram")
            at_confirm: list[list[str]] = []
            settle = channel.offsets.settle

            def confirming(update_id: int) -> None:
                at_confirm.append(admitted_texts(state))
                settle(update_id)

            channel.offsets.settle = confirming
            try:
                channel.offsets.admit(1)
                outcome = await channel.inbound.handle({"update_id": 1, "message": {
                    "from": {"id": OWNER}, "chat": {"id": OWNER, "type": "private"}, "text": text}})
                return outcome, at_confirm
            finally:
                await runtime.close()

        outcome, at_confirm = asyncio.run(go())
        return outcome, at_confirm, admitted_texts(state)


@given(text=texts)
@settings(max_examples=40, deadline=None)
def test_for_any_text_a_confirmed_update_is_admitted_as_sent_or_not_at_all(text: str) -> None:
    outcome, at_confirm, admitted = _deliver(text)
    assert at_confirm, "every update is confirmed exactly when it is settled"
    admissible = text_problem(text) is None and len(text) <= MAX_INBOUND_CHARS
    if outcome == "turn":
        assert admissible and not text.startswith("/")
        assert at_confirm[0] == [text] and admitted == [text]  # durable before confirmed, as sent
    else:
        assert at_confirm[0] == [] and admitted == []
        assert not admissible or text.startswith("/"), outcome
