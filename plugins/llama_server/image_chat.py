"""The one request llama-server gets for images: OpenAI-style `/v1/chat/completions`.

The image goes out as `image_url` content parts holding base64 data URIs, before the text
part. Thinking is switched off (`chat_template_kwargs.enable_thinking: false` and
`reasoning_format: none`) so a thinking-capable model answers in `content` instead of a
separate reasoning channel. No slot id is sent (`id_slot`/`slot_id` are absent): the chat
endpoint picks a free slot itself, so neither a session's main slot nor the reflection slot
is claimed and their prompt caches stay intact.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from atomic_agent.api import ProviderError

CHAT_PATH = "/v1/chat/completions"


def image_chat_body(prompt: str, images: Sequence[tuple[str, bytes]], max_tokens: int) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [
        {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"}}
        for mime, data in images
    ]
    parts.append({"type": "text", "text": prompt})
    return {"messages": [{"role": "user", "content": parts}], "max_tokens": max_tokens, "stream": False,
            "temperature": 0.2, "chat_template_kwargs": {"enable_thinking": False}, "reasoning_format": "none"}


def answer_text(data: Any, url: str) -> str:
    """The assistant text of a chat completion; ProviderError for any other shape."""
    choices = data.get("choices") if isinstance(data, dict) else None
    message = choices[0].get("message") if isinstance(choices, list) and choices and isinstance(choices[0], dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):  # some servers answer in parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ProviderError(f"{url} answered the image request without a message content", status=200, url=url,
                            body=data)
    return content.strip()
