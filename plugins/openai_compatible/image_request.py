"""Images on an OpenAI-compatible chat endpoint: whether the model advertises vision, the
request (`image_url` parts with base64 data URIs, then the prompt) and the answer.

A model advertises vision by its entry's `vision` (the operator's word wins), else by the
bundled OpenRouter catalog for the openrouter preset; otherwise it is taken as text only.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from .endpoint_entry import Endpoint
from .openrouter_catalog import catalog_model


def advertised_vision(endpoint: Endpoint) -> tuple[bool, str]:
    """(takes images, which fact said so: `config`, `catalog` or `none`)."""
    if endpoint.vision is not None:
        return endpoint.vision, "config"
    if endpoint.preset == "openrouter":
        row = catalog_model(endpoint.model)
        if row is not None:
            return row.vision, "catalog"
    return False, "none"


def image_chat_body(endpoint: Endpoint, prompt: str, images: Sequence[tuple[str, bytes]],
                    max_tokens: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"}}
        for mime, data in images
    ]
    parts.append({"type": "text", "text": prompt})
    # the entry's extraBody rides along (a llama.cpp or vLLM server behind this kind takes
    # chat_template_kwargs there to switch thinking off); model, messages and limits are ours
    return {**endpoint.extra_body, "model": endpoint.model, "messages": [{"role": "user", "content": parts}],
            "max_tokens": max_tokens, "stream": False}


def image_reply(data: Any, url: str) -> str:
    from atomic_agent.api import ProviderError

    choices = data.get("choices") if isinstance(data, dict) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ProviderError(f"{url} answered the image request without a message content", status=200, url=url,
                            body=data)
    return content.strip()
