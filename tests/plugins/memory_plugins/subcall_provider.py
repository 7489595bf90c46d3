"""A scripted provider that also answers the memory v2 sub-calls, each by its prompt's
marker: link generator (`### memory-links`) and query rewriter (`### memory-rewrite`),
besides reflection (RoutingProvider). Requests are recorded per sub-call."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from atomic_agent.llm.provider_protocol import Completion, CompletionRequest
from tests.plugins.memory_plugins.routing_provider import RoutingProvider

LINKS_MARKER = "### memory-links"
REWRITE_MARKER = "### memory-rewrite"


class SubcallProvider(RoutingProvider):
    def __init__(self, script: Iterable[Any] = (), reflect: Any = "NONE", *, links: Any = "NONE",
                 rewrite: Any = "NONE", **kwargs: Any) -> None:
        super().__init__(script, reflect, **kwargs)
        self.answers = {LINKS_MARKER: links, REWRITE_MARKER: rewrite}
        self.subcalls: dict[str, list[CompletionRequest]] = {LINKS_MARKER: [], REWRITE_MARKER: []}

    @property
    def link_requests(self) -> list[CompletionRequest]:
        return self.subcalls[LINKS_MARKER]

    @property
    def rewrite_requests(self) -> list[CompletionRequest]:
        return self.subcalls[REWRITE_MARKER]

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        marker = next((m for m in self.answers if request.prompt.startswith(m) or f"\n{m}\n" in request.prompt[:200]),
                      None)
        if marker is None:
            return await super().complete(request, on_delta)
        self.subcalls[marker].append(request)
        answer = self.answers[marker]
        if callable(answer) and not isinstance(answer, BaseException):
            answer = answer(request)
            if inspect.isawaitable(answer):
                answer = await answer
        if isinstance(answer, BaseException):
            raise answer
        return answer if isinstance(answer, Completion) else Completion(content=str(answer), slot_id=request.slot_id)
