"""One completion request and its answer, in the shape every provider maps onto."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen
class CompletionRequest:
    """What the agent loop asks of a provider for one step.

    `grammar` is GBNF text (grammar transport) or None; `slot_id` pins a llama-server slot
    (-1 = let the server choose); `stop` are extra stop strings.
    """

    prompt: str
    grammar: str | None = None
    n_predict: int = 512
    slot_id: int = -1
    cache_prompt: bool = True
    temperature: float = 0.2
    seed: int | None = None
    stream: bool = True
    stop: tuple[str, ...] = ()
    # split of `prompt` into (stable prefix, tail) for providers that speak chat messages
    prefix_length: int | None = None
    # native_tools transport: the ToolSpecs offered as OpenAI-style functions (empty for grammar)
    tools: tuple[Any, ...] = ()
    extra: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen
class Completion:
    """A finished completion. `cache_n` is the number of prompt tokens reused from cache
    (llama-server `timings.cache_n`); `prompt_n` the number actually computed."""

    content: str
    stop: bool = True
    stop_type: str = "eos"  # "eos" | "limit" | "word" | "none"
    truncated: bool = False
    tokens_predicted: int = 0
    tokens_evaluated: int = 0
    cache_n: int = 0
    prompt_n: int = 0
    slot_id: int = -1
    reasoning_content: str = ""
    duration_ms: float = 0.0
    # native_tools transport: the calls the provider returned as (tool name, args dict) pairs,
    # already mapped back to registry names; None on the grammar transport
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] | None = None
    usage: dict[str, Any] = attrs.field(factory=dict)
    raw: dict[str, Any] = attrs.field(factory=dict, repr=False, eq=False)
