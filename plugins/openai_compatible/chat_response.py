"""A /chat/completions answer (whole, or reassembled from a stream) as a Completion."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_agent.api import Completion, ProviderError

from .endpoint_entry import Pricing
from .tool_functions import map_tool_calls
from .usage_cost import usage_fields


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def raw_tool_calls(message: Mapping[str, Any]) -> list[tuple[str, Any]]:
    calls: list[tuple[str, Any]] = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            calls.append((function["name"], function.get("arguments")))
    legacy = message.get("function_call")
    if isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        calls.append((legacy["name"], legacy.get("arguments")))
    return calls


def completion_from_chat(data: Any, *, url: str, native: bool, offered: Mapping[str, str], model: str,
                         pricing: Pricing | None, track_cost: bool, duration_ms: float) -> Completion:
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ProviderError(f"{url} answered without choices: {str(data)[:200]!r}", status=200, url=url, body=data)
    choice = choices[0]
    message = choice.get("message") or choice.get("delta") or {}
    content = _text(message.get("content"))
    reasoning = _text(message.get("reasoning_content")) or _text(message.get("reasoning"))
    finish = choice.get("finish_reason")
    usage = usage_fields(data.get("usage"), model, pricing, track_cost)
    prompt_tokens = usage.get("promptTokens", 0)
    cached = usage.get("cachedTokens", 0)
    return Completion(
        content=content,
        stop=finish != "length",
        stop_type="limit" if finish == "length" else "eos",
        truncated=finish == "length",
        tokens_predicted=usage.get("completionTokens", 0),
        tokens_evaluated=prompt_tokens,
        cache_n=cached,
        prompt_n=max(prompt_tokens - cached, 0),
        reasoning_content=reasoning,
        duration_ms=duration_ms,
        tool_calls=(map_tool_calls(raw_tool_calls(message), offered, cut_by_limit=finish == "length")
                    if native else None),
        usage=usage,
        raw={"finishReason": finish, "id": data.get("id")},
    )
