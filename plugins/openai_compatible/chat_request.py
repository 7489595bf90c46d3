"""The /chat/completions request body for one CompletionRequest.

The prompt is the same monolithic string the grammar path sends, split at the end of its
framed stable prefix: the prefix is the system message and the tail the user message, so
the system message is byte-identical on every step and prompt-caching vendors reuse it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from atomic_agent.api import CompletionRequest

from .endpoint_entry import Endpoint

MAX_STOP_STRINGS = 4  # the OpenAI API accepts at most four


def split_prompt(request: CompletionRequest) -> tuple[str, str]:
    """(system, user). Without a usable prefix length the whole prompt is the user message."""
    cut = request.prefix_length
    prompt = request.prompt
    if cut is None or not 0 < cut < len(prompt):
        return "", prompt
    return prompt[:cut], prompt[cut:]


def chat_messages(request: CompletionRequest, prefill: str = "") -> list[dict[str, Any]]:
    system, user = split_prompt(request)
    messages: list[dict[str, Any]] = []
    if system.strip():
        messages.append({"role": "system", "content": system})
    messages.append({"role": "user", "content": user if user.strip() else "(continue)"})
    if prefill:
        # a final assistant message is continued by servers that support prefill
        messages.append({"role": "assistant", "content": prefill})
    return messages


def build_chat_body(endpoint: Endpoint, request: CompletionRequest, tools: Sequence[dict[str, Any]] | None,
                    stream: bool) -> dict[str, Any]:
    limit = endpoint.max_tokens
    max_tokens = min(request.n_predict, limit) if request.n_predict > 0 else limit
    body: dict[str, Any] = {
        "model": endpoint.model,
        "messages": chat_messages(request, endpoint.assistant_prefill),
        "max_tokens": max_tokens,
        "temperature": endpoint.temperature if endpoint.temperature is not None else request.temperature,
        "stream": stream,
    }
    if stream:
        body["stream_options"] = {"include_usage": True}
    if request.seed is not None:
        body["seed"] = request.seed
    if request.stop:
        body["stop"] = list(request.stop)[:MAX_STOP_STRINGS]
    if tools is not None:
        body["tools"] = list(tools)
        body["tool_choice"] = endpoint.tool_choice
    elif request.grammar:
        # grammar transport: servers built on llama.cpp honour a GBNF `grammar` field here too
        body["grammar"] = request.grammar
    body.update(endpoint.extra_body)
    return body
