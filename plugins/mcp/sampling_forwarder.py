"""Answer `sampling/createMessage` from MCP servers with the session's text provider.

Always on llama-server slot -1 with `cache_prompt: false`: the main agent slot and the
reflection slot are never touched, so a chatty or hostile server cannot evict the
agent's cached prompt mid-turn. Free-form text, no grammar. Caps beyond the protocol:
requests per minute per server, a max-token ceiling and a timeout. Every refusal or
failure raises SamplingRefused, which the connection turns into a JSON-RPC error for
the server; the transport never breaks over it.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.mcp.mcp_records import SamplingReply, SamplingRequest
from atomic_agent.plugins.mcp.server_config import SamplingConfig

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

SAMPLING_SLOT = -1
DEFAULT_SYSTEM = "You answer a request an MCP tool server sent on behalf of the user. Reply with plain text."
WINDOW_S = 60.0


class SamplingRefused(Exception):
    """The request was not answered; the message goes back to the server."""


class SamplingForwarder:
    def __init__(self, runtime: RuntimeView, cfg: SamplingConfig, clock: Callable[[], float] = time.monotonic) -> None:
        self.runtime = runtime
        self.cfg = cfg
        self._clock = clock
        self._recent: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        self.requests = 0  # answered, for status and tests

    def _admit(self, server: str) -> None:
        if not self.cfg.enabled:
            raise SamplingRefused("sampling is switched off on this client (mcp.sampling.enabled)")
        now = self._clock()
        recent = self._recent[server]
        while recent and now - recent[0] >= WINDOW_S:
            recent.popleft()
        if len(recent) >= self.cfg.requests_per_minute:
            raise SamplingRefused(f"sampling rate limit: {self.cfg.requests_per_minute} requests per minute "
                                  "(mcp.sampling.requestsPerMinute)")
        recent.append(now)

    async def __call__(self, request: SamplingRequest) -> SamplingReply:
        from atomic_agent.api import CompletionRequest

        self._admit(request.server)
        provider = self.runtime.provider
        profile = await self._profile()
        system = request.system_prompt or DEFAULT_SYSTEM
        tail = "\n\n".join(f"{'User' if m.role == 'user' else 'Assistant'}: {m.text}" for m in request.messages)
        if profile is not None:
            prompt, prefix_length = profile.frame_prompt(system, tail), len(profile.frame_stable_prefix(system))
        else:
            prompt, prefix_length = f"{system}\n\n{tail}\n\nAssistant: ", len(system)
        n_predict = max(1, min(request.max_tokens, self.cfg.max_tokens))
        temperature = 0.7 if request.temperature is None else max(0.0, min(float(request.temperature), 2.0))
        completion_request = CompletionRequest(prompt=prompt, grammar=None, n_predict=n_predict, slot_id=SAMPLING_SLOT,
                                               cache_prompt=False, temperature=temperature, stream=False,
                                               stop=request.stop[:4], prefix_length=prefix_length)
        try:
            completion = await asyncio.wait_for(provider.complete(completion_request), self.cfg.timeout_s)
        except (TimeoutError, asyncio.TimeoutError):
            raise SamplingRefused(f"the model gave no answer within {self.cfg.timeout_s} s "
                                  "(mcp.sampling.timeoutS)") from None
        except Exception as exc:
            raise SamplingRefused(f"the model call failed: {type(exc).__name__}: {exc}") from None
        text = completion.content
        if profile is not None and profile.reasoning_close and profile.reasoning_close in text:
            text = text.rsplit(profile.reasoning_close, 1)[1]
        limited = completion.truncated or completion.stop_type == "limit"
        stop_reason = "maxTokens" if limited else ("stopSequence" if completion.stop_type == "word" else "endTurn")
        self.requests += 1
        return SamplingReply(text=text.strip(), model=_model_name(provider), stop_reason=stop_reason)

    async def _profile(self) -> Any:
        plan = getattr(self.runtime, "prompt_plan", None)
        if plan is None:
            return None
        try:
            return (await plan()).profile
        except Exception:  # no plan (server unreachable): frame the prompt plainly
            return None


def _model_name(provider: Any) -> str:
    for attr in ("model_alias", "model", "name"):
        value = getattr(provider, attr, None)
        if isinstance(value, str) and value:
            return value
    return "atomic-agent"
