"""Reassemble a streamed /chat/completions answer (SSE `data:` lines) into one response.

Content deltas are forwarded as they arrive; tool-call fragments are joined per index;
the usage chunk (sent with `stream_options.include_usage`) is kept. An `error` event
mid-stream becomes the vendor's error.
"""

from __future__ import annotations

import json
from typing import Any

DONE = "[DONE]"


class StreamErrorEvent(Exception):
    def __init__(self, payload: dict[str, Any]) -> None:
        super().__init__(str(payload.get("error")))
        self.payload = payload


class ChatStreamAccumulator:
    def __init__(self) -> None:
        self.content: list[str] = []
        self.reasoning: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.done = False
        self.chunks = 0
        self.response_id: str | None = None

    def feed_line(self, line: str) -> str:
        """Consume one SSE line; returns the content text it added ("" for none)."""
        line = line.strip()
        if not line.startswith("data:"):
            return ""  # blank separators, `event:` lines and `:` keep-alive comments
        payload = line[5:].strip()
        if payload == DONE:
            self.done = True
            return ""
        event = json.loads(payload)
        if not isinstance(event, dict):
            raise ValueError(f"stream event is {type(event).__name__}, not an object")
        if "error" in event:
            raise StreamErrorEvent(event)
        return self.feed(event)

    def feed(self, event: dict[str, Any]) -> str:
        self.chunks += 1
        self.response_id = self.response_id or event.get("id")
        if isinstance(event.get("usage"), dict):
            self.usage = event["usage"]
        added = ""
        for choice in event.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            delta = choice.get("delta") or {}
            piece = delta.get("content")
            if isinstance(piece, str) and piece:
                self.content.append(piece)
                added += piece
            thought = delta.get("reasoning_content") or delta.get("reasoning")
            if isinstance(thought, str):
                self.reasoning.append(thought)
            for fragment in delta.get("tool_calls") or []:
                self._add_call_fragment(fragment)
        return added

    def _add_call_fragment(self, fragment: Any) -> None:
        if not isinstance(fragment, dict):
            return
        index = fragment.get("index", len(self.calls))
        call = self.calls.setdefault(index, {"name": "", "arguments": []})
        function = fragment.get("function") or {}
        if isinstance(function.get("name"), str):
            call["name"] += function["name"]
        if isinstance(function.get("arguments"), str):
            call["arguments"].append(function["arguments"])

    @property
    def complete(self) -> bool:
        return self.done or self.finish_reason is not None

    def response(self) -> dict[str, Any]:
        """The answer in the shape of a non-streamed response."""
        calls = [{"type": "function", "function": {"name": c["name"], "arguments": "".join(c["arguments"])}}
                 for _, c in sorted(self.calls.items()) if c["name"]]
        message: dict[str, Any] = {"role": "assistant", "content": "".join(self.content),
                                   "reasoning_content": "".join(self.reasoning)}
        if calls:
            message["tool_calls"] = calls
        return {"id": self.response_id, "choices": [{"index": 0, "message": message,
                                                     "finish_reason": self.finish_reason}],
                "usage": self.usage}
