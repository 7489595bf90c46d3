"""The protocol every text provider implements (llama-server, OpenAI-compatible, CLIs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import attrs

from atomic_agent.hook_records import ProviderCapabilities

# EmbeddingUnavailable: the one error an embedding call raises; callers degrade, never crash.

class EmbeddingUnavailable(Exception):
    """No vectors this time: nothing configured, the daemon is down, or it answered badly.

    Hybrid recall treats this as "lexical only for now"; it is never fatal to a turn.
    `status` is the HTTP status when there was one.
    """

    def __init__(self, message: str, provider_id: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.provider_id = provider_id
        self.status = status


# One completion request and its answer, in the shape every provider maps onto.

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
    # (stable prefix, tail) before a model profile framed them into `prompt`: a fallback link
    # whose model wants other chat markers frames them its own way (None: the caller's prompt
    # goes out as it is)
    parts: tuple[str, str] | None = None
    # the prompt style (coached, full) `parts` are written in, and how to write them in another:
    # a fallback link whose model wants the other style gets its own rendering (None: no other)
    style: str | None = None
    render_parts: Callable[[str], tuple[str, str]] | None = attrs.field(default=None, eq=False, repr=False)


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


DeltaCallback = Callable[[str], None]


@runtime_checkable
class TextProvider(Protocol):
    """A built provider. Errors are raised as `ProviderError` subclasses."""

    capabilities: ProviderCapabilities
    mode: str  # e.g. "managed" | "external" | "cloud" — reported in llm_unavailable

    async def complete(self, request: CompletionRequest, on_delta: DeltaCallback | None = None) -> Completion:
        """Run one completion; with `request.stream`, call `on_delta(text)` per chunk."""
        ...

    async def context_window(self) -> int | None:
        """Tokens available to one request (llama-server: per-slot n_ctx), None if unknown."""
        ...

    async def describe(self) -> dict[str, object]:
        """Facts for profile detection: chat_template, model_alias, modalities."""
        ...

    def unavailable_hint(self) -> str:
        """One sentence telling the user how to bring the backend up."""
        ...

    async def close(self) -> None: ...


# Optional capabilities: a provider declares one by implementing its methods (structural,
# nothing to inherit); the core asks `slot_affinity(provider)` / `token_counter(provider)`.

@runtime_checkable
class SlotAffinity(Protocol):
    """A backend with parallel slots that each keep their own prompt cache (llama-server
    `--parallel`): every step of a session rides one slot so its prefix stays cached, and a
    reserved slot carries background calls without evicting a session's prefix."""

    def slot_for(self, session_id: str) -> int:
        """The slot id every step of `session_id` uses, from its first step on (-1 = any)."""
        ...

    def reflection_slot(self) -> int:
        """The slot reserved for background calls, -1 when none is (a single slot)."""
        ...

    async def total_slots(self) -> int:
        """How many parallel slots the backend has."""
        ...


@runtime_checkable
class TokenCounter(Protocol):
    """A backend that can tokenize: exact counts for the prompt preview."""

    async def count_tokens(self, text: str) -> int | None:
        """Exact token count, None when the backend cannot answer right now."""
        ...


@runtime_checkable
class ProviderWrapper(Protocol):
    """A provider standing in front of another (the fallback seam, a session's view of it):
    the capabilities are those of `wrapped_provider`."""

    @property
    def wrapped_provider(self) -> object: ...


def _unwrapped(provider: object) -> object:
    while isinstance(provider, ProviderWrapper):
        provider = provider.wrapped_provider
    return provider


def slot_affinity(provider: object) -> SlotAffinity | None:
    """The provider's slots, None for a backend without them (a hosted API, a CLI)."""
    inner = _unwrapped(provider)
    return inner if isinstance(inner, SlotAffinity) else None


def token_counter(provider: object) -> TokenCounter | None:
    """The provider's tokenizer, None for a backend without one."""
    inner = _unwrapped(provider)
    return inner if isinstance(inner, TokenCounter) else None


class ProviderError(Exception):
    """A provider failed. `status` is the HTTP status, None for a network failure.

    `timed_out` marks our own client giving up (read, write or pool timeout, or a stream
    that stalled): the provider was reached and was too slow. It is classified
    `provider_timeout`, never a cancel, whatever the exception chain underneath holds."""

    timed_out: bool = False  # a class default, so a subclass may declare itself a timeout

    def __init__(self, message: str, status: int | None = None, url: str | None = None,
                 body: object = None, error_type: str | None = None, timed_out: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.url = url
        self.body = body
        self.error_type = error_type
        if timed_out:
            self.timed_out = True


class ProviderUnavailableError(ProviderError):
    """The backend cannot be reached at all (connection refused, DNS, loading forever)."""
