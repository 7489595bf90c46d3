"""What a FakeLlamaServer plays and records: the script items (replies, HTTP faults in
llama-server's error envelope, dropped connections, delays), the recorded requests, and its
deterministic 4-characters-per-token tokenizer."""

from __future__ import annotations

import time
import zlib
from typing import Any

import attrs

CHARS_PER_TOKEN = 4
DEFAULT_REPLY = '[{"tool":"reply","args":{"text":"done"}}]'


@attrs.frozen
class Reply:
    """Answer with `content`; `stop_type="limit"` / `truncated=True` script a cut-off answer."""

    content: str
    stop_type: str | None = None  # None: decided like the real server (eos, limit, word)
    truncated: bool = False


@attrs.frozen
class HttpFault:
    """Answer with an HTTP error in llama-server's `{"error": {code, message, type}}` envelope."""

    status: int
    message: str
    error_type: str
    extra: dict[str, Any] = attrs.field(factory=dict)

    @classmethod
    def grammar_error(cls) -> HttpFault:
        return cls(400, "Failed to initialize samplers: failed to parse grammar", "invalid_request_error")

    @classmethod
    def context_exceeded(cls, n_prompt_tokens: int = 5001, n_ctx: int = 4096) -> HttpFault:
        message = (f"request ({n_prompt_tokens} tokens) exceeds the available context size ({n_ctx} tokens), "
                   "try increasing it")
        return cls(400, message, "exceed_context_size_error", {"n_prompt_tokens": n_prompt_tokens, "n_ctx": n_ctx})

    @classmethod
    def server_error(cls, message: str = "Internal Server Error") -> HttpFault:
        return cls(500, message, "server_error")

    @classmethod
    def loading(cls) -> HttpFault:
        return cls(503, "Loading model", "unavailable_error")

    def body(self) -> dict[str, Any]:
        return {"error": {"code": self.status, "message": self.message, "type": self.error_type, **self.extra}}


@attrs.frozen
class DropConnection:
    """Close the socket abruptly: before any response (`after_chunks=0`), or for a streaming
    request after that many content chunks of `content` were sent."""

    after_chunks: int = 0
    content: str = DEFAULT_REPLY


@attrs.frozen
class Delay:
    """Wait `seconds`, then answer with `then` (the default reply when None)."""

    seconds: float
    then: str | Reply | HttpFault | DropConnection | None = None


@attrs.frozen
class Stall:
    """Stream `after_chunks` content chunks of `content`, then send nothing for `seconds` (a
    server that hangs mid-answer), then finish the answer."""

    after_chunks: int
    seconds: float
    content: str = DEFAULT_REPLY


ScriptItem = str | Reply | HttpFault | DropConnection | Delay | Stall


def fake_tokenize(text: str) -> list[int]:
    """The fake's deterministic tokenizer: one token per 4 characters."""
    return [zlib.crc32(text[i:i + CHARS_PER_TOKEN].encode()) % 49152 for i in range(0, len(text), CHARS_PER_TOKEN)]


@attrs.frozen
class RecordedRequest:
    method: str
    path: str
    body: Any
    received_at: float = attrs.field(factory=time.time)  # wall clock, for start-up benchmarks


class RefusedRequest(Exception):
    """A request the real server would reject; answered with `fault`."""

    def __init__(self, fault: HttpFault) -> None:
        super().__init__(fault.message)
        self.fault = fault


def common_prefix_length(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
