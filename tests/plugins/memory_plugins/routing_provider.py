"""A scripted provider that tells agent steps from reflection sub-calls.

Agent steps answer from the script (ScriptedProvider); a request whose prompt carries the
reflection prefix is answered by `reflect` (a string, an exception, or a callable, sync or
async, taking the request) and recorded in `reflection_requests`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from atomic_agent.llm.provider_protocol import Completion, CompletionRequest
from atomic_agent.testing.scripted_provider import ScriptedProvider

REFLECTION_MARKER = "### memory-reflection"


class RoutingProvider(ScriptedProvider):
    def __init__(self, script: Iterable[Any] = (), reflect: Any = "NONE", *, transport: str = "grammar",
                 main_slot: int = 0, reflection_slot_id: int | None = 1) -> None:
        super().__init__(script, transport=transport, slot=main_slot)
        self.reflect = reflect
        self.reflection_requests: list[CompletionRequest] = []
        self.reflection_slot_id = reflection_slot_id
        if reflection_slot_id is None:
            self.reflection_slot = None  # type: ignore[assignment]  # a provider without the method

    def reflection_slot(self) -> int:  # noqa: D102  (mirrors LlamaServerProvider)
        return -1 if self.reflection_slot_id is None else self.reflection_slot_id

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        if REFLECTION_MARKER not in request.prompt:
            return await super().complete(request, on_delta)
        self.reflection_requests.append(request)
        answer = self.reflect
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(request)
            if inspect.isawaitable(answer):
                answer = await answer
        if isinstance(answer, BaseException):
            raise answer
        return answer if isinstance(answer, Completion) else Completion(content=str(answer), slot_id=request.slot_id)
