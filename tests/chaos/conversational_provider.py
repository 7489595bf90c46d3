"""A model that answers from the conversation it is handed, never from a script.

For every message not yet answered (in order) it calls the side-effect tool once with the
message's id, then the durable read tool, then replies `answered <ids>`. Whether the two
calls share a batch is decided by a hash of the id, so a restarted runtime given the same
durable conversation makes exactly the decision its dead predecessor would have.
A compaction request is answered with a summary that keeps every id (conversation_reader).
"""

from __future__ import annotations

import asyncio
import json
import zlib
from collections.abc import Callable
from typing import Any

from atomic_agent.llm.provider_protocol import CompletionRequest
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.chaos.conversation_reader import EFFECT, READ, Heard, hear_prompt, write_summary


def _together(message_id: str) -> bool:
    return zlib.crc32(message_id.encode()) % 2 == 0


def decide(heard: Heard) -> str:
    for message in heard.pending:
        want = [(tool, {"id": message}) for tool in (EFFECT, READ) if (tool, message) not in heard.called]
        if want:
            return calls(*(want if _together(message) else want[:1]))
    return calls(("reply", {"text": " ".join(["answered", *heard.pending])}))


def answer(request: CompletionRequest) -> str:
    prompt = request.prompt
    if "### compaction\n" in prompt:
        return write_summary(hear_prompt(prompt, "summary-of-earlier-conversation", "conversation"))
    return decide(hear_prompt(prompt, "earlier-conversation", "conversation"))


class ConversationalProvider(ScriptedProvider):
    """`check_alive` raises SimulatedCrash once the process it belongs to is dead."""

    def __init__(self, check_alive: Callable[[], None], yields: int = 1) -> None:
        super().__init__([], default=answer)  # type: ignore[arg-type]
        self._check_alive = check_alive
        self._yields = yields

    async def complete(self, request: CompletionRequest, on_delta: Any = None) -> Any:
        self._check_alive()
        for _ in range(self._yields):  # an inference takes time: stops and steers land meanwhile
            await asyncio.sleep(0)
        self._check_alive()
        self.requests.clear()  # nobody reads them; keep memory flat over long hunts
        return await super().complete(request, on_delta)


def parse_calls(content: str) -> list[dict[str, Any]]:
    return json.loads(content)
