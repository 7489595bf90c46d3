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
    def __new__(cls, *args: Any, reflection_slot_id: int | None = 1, **kwargs: Any) -> RoutingProvider:
        # reflection_slot_id=None stands for a provider without slots (a hosted API)
        return super().__new__(_WithoutSlots if reflection_slot_id is None and cls is RoutingProvider else cls)

    def __init__(self, script: Iterable[Any] = (), reflect: Any = "NONE", *, transport: str = "grammar",
                 main_slot: int = 0, reflection_slot_id: int | None = 1) -> None:
        super().__init__(script, transport=transport, slot=main_slot)
        self.reflect = reflect
        self.reflection_requests: list[CompletionRequest] = []
        self.reflection_slot_id = reflection_slot_id

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


class _WithoutSlots(RoutingProvider):
    """No SlotAffinity: a member set to None is one the class does not implement."""

    slot_for = None  # type: ignore[assignment]
    reflection_slot = None  # type: ignore[assignment]
