"""Per-link request shape: the request built for the primary, fitted to the link that serves.

A grammar link needs its GBNF even when the primary speaks native tools (the common
cloud -> local fallover), and a native link needs the tool specs even when the primary
is grammar-only. Both are built lazily, once, from the runtime's own pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from atomic_agent.llm.completion import CompletionRequest
from atomic_agent.providers.llm_config import TRANSPORT_GRAMMAR


class RequestShaper:
    def __init__(self, tool_specs: Callable[[], Sequence[Any]], grammar: Callable[[], str | None]) -> None:
        self._tool_specs = tool_specs
        self._grammar = grammar
        self._grammar_text: str | None = None

    def grammar(self) -> str | None:
        if self._grammar_text is None:
            self._grammar_text = self._grammar()
        return self._grammar_text

    def forget(self) -> None:
        """Drop the cached grammar (the profile or the tool set changed)."""
        self._grammar_text = None

    def shape(self, request: CompletionRequest, transport: str) -> CompletionRequest:
        if transport == TRANSPORT_GRAMMAR:
            if request.grammar is None:
                request = attrs.evolve(request, grammar=self.grammar())
            return attrs.evolve(request, tools=()) if request.tools else request
        if not request.tools:
            request = attrs.evolve(request, tools=tuple(self._tool_specs()))
        return request


class PassThroughShaper:
    """For chains built without a runtime (tests, embedders): requests go out unchanged."""

    def shape(self, request: CompletionRequest, transport: str) -> CompletionRequest:
        return request

    def forget(self) -> None:
        return None
