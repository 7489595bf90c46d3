"""The fake llama-server's `/v1/chat/completions` for image requests: it checks the exact
request shape the vision adapter must send and answers with what it received.

A request is refused (HTTP 400, the problem in the message) unless it holds one user
message whose content is one or more `image_url` parts with base64 `data:` URIs — each
decoding to bytes of the declared image type — followed by one text part; unless thinking
is off (`chat_template_kwargs.enable_thinking: false`, `reasoning_format: "none"`) when
`require_thinking_off`; and whenever it names a slot (`id_slot` or `slot_id`): image
requests must leave the main and reflection slots alone. The answer's content is
`reply` followed by one `[MIME N bytes]` tag per image, so a test sees the bytes arrived.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

_DATA_URI = re.compile(r"\Adata:(image/(?:png|jpeg|webp|gif));base64,([A-Za-z0-9+/]*={0,2})\Z")
_MAGIC = {"image/png": (b"\x89PNG\r\n\x1a\n",), "image/jpeg": (b"\xff\xd8\xff",), "image/gif": (b"GIF87a", b"GIF89a")}


def _matches(mime: str, data: bytes) -> bool:
    if mime == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return data.startswith(_MAGIC[mime])


def image_request_problem(body: Any, *, require_thinking_off: bool = True) -> tuple[str | None, list[tuple[str, int]]]:
    """(what is wrong or None, [(mime, byte count)] of the images)."""
    if not isinstance(body, dict):
        return "the body must be a JSON object", []
    for key in ("id_slot", "slot_id"):
        if key in body:
            return f"image requests must not name a slot ({key}={body[key]!r})", []
    if require_thinking_off:
        kwargs = body.get("chat_template_kwargs")
        if not isinstance(kwargs, dict) or kwargs.get("enable_thinking") is not False:
            return "chat_template_kwargs.enable_thinking must be false", []
        if body.get("reasoning_format") != "none":
            return "reasoning_format must be \"none\"", []
    messages = body.get("messages")
    if not isinstance(messages, list) or len(messages) != 1 or not isinstance(messages[0], dict):
        return "messages must hold exactly one message", []
    message = messages[0]
    parts = message.get("content")
    if message.get("role") != "user" or not isinstance(parts, list) or len(parts) < 2:
        return "the message must be the user's, with image parts and a text part", []
    *images, text = parts
    if not isinstance(text, dict) or text.get("type") != "text" or not str(text.get("text") or "").strip():
        return "the last part must be a non-empty text part (the prompt)", []
    seen: list[tuple[str, int]] = []
    for part in images:
        url = part.get("image_url", {}).get("url") if isinstance(part, dict) and part.get("type") == "image_url" else None
        match = _DATA_URI.match(url) if isinstance(url, str) else None
        if match is None:
            return "every part before the text must be an image_url part with a base64 data:image/... URI", []
        try:
            data = base64.b64decode(match.group(2), validate=True)
        except binascii.Error:
            return "an image data URI is not valid base64", []
        if not _matches(match.group(1), data):
            return f"an image declared {match.group(1)} does not start with that type's magic bytes", []
        seen.append((match.group(1), len(data)))
    return None, seen


def image_answer(reply: str, seen: list[tuple[str, int]], model: str) -> dict[str, Any]:
    content = reply + "".join(f" [{mime} {size} bytes]" for mime, size in seen)
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
