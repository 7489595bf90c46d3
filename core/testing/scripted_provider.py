"""An in-process provider that answers from a script (unit tests of the agent loop).

It records every request, streams each answer in small chunks, and can raise a scripted
error instead of answering. For end-to-end tests use the real llama-server fixture or
the llama_server plugin's FakeLlamaServer over HTTP instead.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from atomic_agent.hook_records import ProviderCapabilities
from atomic_agent.llm.provider_protocol import Completion, CompletionRequest

ScriptItem = Any  # str | Completion | BaseException | Callable[[CompletionRequest], Any]


def calls(*pairs: tuple[str, dict[str, Any]]) -> str:
    """A grammar-shaped answer: calls(("reply", {"text": "hi"})) -> '[{"tool": ...}]'."""
    return json.dumps([{"tool": tool, "args": args} for tool, args in pairs])


class ScriptedProvider:
    def __init__(self, script: Iterable[ScriptItem] = (), *, n_ctx: int | None = 8192, chat_template: str = "",
                 model_alias: str = "scripted", default: str | None = None, transport: str = "grammar",
                 delay_s: float = 0.0, slot: int = 0) -> None:
        self.script = list(script)
        self.requests: list[CompletionRequest] = []
        self.n_ctx = n_ctx
        self.chat_template = chat_template
        self.model_alias = model_alias
        self.default = default if default is not None else calls(("reply", {"text": "done"}))
        self.capabilities = ProviderCapabilities(transport=transport, slot_affinity=slot >= 0)
        self.mode = "scripted"
        self.delay_s = delay_s
        self.slot = slot
        self.max_tokens = 256
        self.closed = False
        self._prev_prompt = ""

    async def complete(self, request: CompletionRequest, on_delta: Callable[[str], None] | None = None) -> Completion:
        self.requests.append(request)
        item = self.script.pop(0) if self.script else self.default
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        if callable(item) and not isinstance(item, (str, Completion)):
            item = item(request)
        if isinstance(item, BaseException):
            raise item
        completion = item if isinstance(item, Completion) else Completion(content=str(item), tokens_predicted=len(str(item)) // 4)
        common = common_prefix_length(self._prev_prompt, request.prompt)
        self._prev_prompt = request.prompt
        completion = Completion(**{**_fields(completion), "cache_n": common // 4,
                                   "prompt_n": (len(request.prompt) - common) // 4, "slot_id": request.slot_id})
        if request.stream and on_delta is not None:
            for i in range(0, len(completion.content), 7):
                on_delta(completion.content[i:i + 7])
        return completion

    async def context_window(self) -> int | None:
        return self.n_ctx

    def slot_for(self, session_id: str) -> int:
        return self.slot

    def reflection_slot(self) -> int:
        return -1  # no reserved background slot

    async def total_slots(self) -> int:
        return 2

    async def count_tokens(self, text: str) -> int | None:
        return None

    async def describe(self) -> dict[str, object]:
        return {"chat_template": self.chat_template, "model_alias": self.model_alias, "modalities": {}}

    def unavailable_hint(self) -> str:
        return "the scripted provider is always available"

    async def close(self) -> None:
        self.closed = True


def _fields(c: Completion) -> dict[str, Any]:
    import attrs

    return attrs.asdict(c, recurse=False)


def prompts(provider: ScriptedProvider) -> Sequence[str]:
    return [r.prompt for r in provider.requests]


def common_prefix_length(a: str, b: str) -> int:
    """len(os.path.commonprefix([a, b])) by bisection on slice comparisons: the scripted
    provider emulates the server's cache on every step, and a character loop over two
    prompts would be counted as framework overhead by benchmarks/agent_loop.py."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
