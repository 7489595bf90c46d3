"""The completion seam the agent loop calls: a TextProvider backed by the fallback chain.

Every attempt re-resolves the serving link's transport and fits the request to it; the
completion comes back stamped with that link's transport (native links always carry a
`tool_calls` tuple, grammar links never do), so the loop parses what the served link
actually produced, not what the primary would have. Everything that is not a completion
(context window, slots, profile facts, hints) is the primary's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from atomic_agent.llm.model_profile import PLAIN_TEXT_PROFILE, ModelProfile
from atomic_agent.llm.model_text import repair_completion, repair_text
from atomic_agent.llm.provider_protocol import (
    Completion,
    CompletionRequest,
    DeltaCallback,
    ProviderError,
    ProviderUnavailableError,
    TextProvider,
    slot_affinity,
)
from atomic_agent.providers.fallback_chain import (
    LiveFlag,
    ProviderFallbackChain,
    SwitchNotice,
    monotonic_ms,
    resolve_fallback_chain,
    run_with_fallback,
)
from atomic_agent.providers.llm_config import TRANSPORT_GRAMMAR
from atomic_agent.providers.provider_registry import ProviderRegistry
from atomic_agent.reliability.failure_taxonomy import model_error_for

# Per-link request shape: the request built for the primary, fitted to the link that serves.
#
# A grammar link needs its GBNF even when the primary speaks native tools (the common
# cloud -> local fallover), and a native link needs the tool specs even when the primary
# is grammar-only. A grammar link also gets the prompt framed for its own model: a cloud
# primary's prompt is plain text, and a local ChatML model handed plain text answers far
# worse (the starter model copied the prompt's "The user asked:" line as its reply). A
# link that is not the primary has no slot of its own in the request, so it gets the
# session's slot on that server.

# Each link also gets the prompt in its own style: a cloud primary resolves `prompt.style:
# auto` to `full`, a small local fallback to `coached`, and the step's request carries a way
# to render its parts in another style (`render_parts`).

ProfileOf = Callable[[Any], Awaitable[ModelProfile | None]]
StyleOf = Callable[[Any], Awaitable[str | None]]  # a link's resolved prompt style; None: its server did not answer


class RequestShaper:
    def __init__(self, tool_specs: Callable[[], Sequence[Any]], grammar: Callable[[ModelProfile | None], str | None],
                 profile_of: ProfileOf | None = None, style_of: StyleOf | None = None) -> None:
        self._tool_specs = tool_specs
        self._grammar = grammar
        self._profile_of = profile_of
        self._style_of = style_of
        self._profiles: dict[str, ModelProfile] = {}
        self._styles: dict[str, str] = {}

    def forget(self) -> None:
        """Drop the links' cached model profiles and styles (the active provider changed)."""
        self._profiles.clear()
        self._styles.clear()

    async def _link_style(self, provider_id: str, provider: Any) -> str | None:
        if provider_id not in self._styles and self._style_of is not None:
            try:
                style = await self._style_of(provider)
            except Exception:  # as for the profile: the completion will say what is wrong
                style = None
            if style is None:
                return None
            self._styles[provider_id] = style
        return self._styles.get(provider_id)

    async def _restyled(self, request: CompletionRequest, provider_id: str, provider: Any) -> CompletionRequest:
        """The request with its parts rendered in the link's own prompt style, when that differs."""
        if request.render_parts is None or request.style is None or request.parts is None or provider is None:
            return request
        style = await self._link_style(provider_id, provider)
        if style is None or style == request.style:
            return request
        stable, tail = request.render_parts(style)
        # framed plainly here; a grammar link then frames the parts for its own model
        return attrs.evolve(request, parts=(stable, tail), style=style,
                            prompt=PLAIN_TEXT_PROFILE.frame_prompt(stable, tail),
                            prefix_length=len(PLAIN_TEXT_PROFILE.frame_stable_prefix(stable)))

    async def _link_profile(self, provider_id: str, provider: Any) -> ModelProfile | None:
        if provider_id not in self._profiles and self._profile_of is not None:
            try:
                profile = await self._profile_of(provider)
            except Exception:  # the completion itself will say what is wrong with the link
                profile = None
            if profile is None:
                return None  # the link's server did not answer: ask again next time
            self._profiles[provider_id] = profile
        return self._profiles.get(provider_id)

    async def shape(self, request: CompletionRequest, transport: str, provider_id: str = "", provider: Any = None,
                    primary: bool = True, session_id: str | None = None) -> CompletionRequest:
        # a step asks for tool calls (a grammar, or tool specs); a compaction summary or an MCP
        # sampling call asks for free text, and must not be handed a tool-call grammar or tools
        asks_for_calls = request.grammar is not None or bool(request.tools)
        if not primary:
            request = await self._restyled(request, provider_id, provider)
        if transport != TRANSPORT_GRAMMAR:
            if asks_for_calls and not request.tools:
                request = attrs.evolve(request, tools=tuple(self._tool_specs()))
            return request
        if request.tools:
            request = attrs.evolve(request, tools=())
        if primary and (request.grammar is not None or not asks_for_calls):
            return request  # built for this very link
        profile = await self._link_profile(provider_id, provider) if provider is not None and not primary else None
        if profile is not None and request.parts is not None:
            stable, tail = request.parts
            request = attrs.evolve(request, prompt=profile.frame_prompt(stable, tail),
                                   prefix_length=len(profile.frame_stable_prefix(stable)))
        if not asks_for_calls:
            return request  # free text keeps its slot choice (-1: never evict the session's cache)
        request = attrs.evolve(request, grammar=self._grammar(profile))
        slots = slot_affinity(provider)
        if not primary and session_id is not None and request.slot_id < 0 and slots is not None:
            request = attrs.evolve(request, slot_id=int(slots.slot_for(session_id)))
        return request


class PassThroughShaper:
    """For chains built without a runtime (tests, embedders): requests go out unchanged."""

    async def shape(self, request: CompletionRequest, transport: str, provider_id: str = "", provider: Any = None,
                    primary: bool = True, session_id: str | None = None) -> CompletionRequest:
        return request

    def forget(self) -> None:
        return None


NoticeSink = Callable[[SwitchNotice], None]
UsageSink = Callable[[str, Completion], None]  # (serving provider id, completion)


def stamp_served(completion: Completion, provider_id: str, transport: str) -> Completion:
    calls = completion.tool_calls
    if transport == TRANSPORT_GRAMMAR:
        calls = None
    elif calls is None:
        calls = ()
    return attrs.evolve(completion, tool_calls=calls,
                        raw={**completion.raw, "servedBy": provider_id, "servedTransport": transport})


def _judge(completion: Completion) -> BaseException | None:
    # the same test the loop applies; native answers are judged by the batch mapping instead
    return model_error_for(completion) if completion.tool_calls is None else None


class FallbackTextProvider:
    def __init__(self, registry: ProviderRegistry, shaper: RequestShaper | PassThroughShaper | None = None,
                 clock_ms: Callable[[], float] = monotonic_ms, notice_sink: NoticeSink | None = None) -> None:
        self.registry = registry
        self.shaper = shaper or PassThroughShaper()
        self.notice_sink = notice_sink
        self.chain = ProviderFallbackChain(self._resolve_links(), registry.llm.fallback, clock_ms=clock_ms)
        self._last_unavailable: str | None = None
        registry.on_active_changed(self._reprime)

    def _resolve_links(self) -> tuple[str, ...]:
        reg = self.registry
        return resolve_fallback_chain(reg.llm.fallback, reg.ids, reg.active_id, reg.local_id())

    def _reprime(self, _active_id: str) -> None:
        self.chain.reprime(self._resolve_links())
        self.shaper.forget()

    # -- the primary's facts ------------------------------------------------------------------
    @property
    def primary(self) -> Any:
        return self.registry.active_text()

    @property
    def capabilities(self) -> Any:
        return self.primary.capabilities

    @property
    def mode(self) -> str:
        return str(getattr(self.primary, "mode", "unknown"))

    # The primary's extras: what callers use beyond TextProvider. Each is the primary's own
    # and raises AttributeError when the primary has none (a hosted API has no slots), so
    # callers ask with `getattr(provider, name, None)` whether it is there.
    @property
    def max_tokens(self) -> int:
        """The cap on generated tokens per step."""
        return int(self.primary.max_tokens)

    @property
    def temperature(self) -> float:
        return float(self.primary.temperature)

    @property
    def model_alias(self) -> str:
        """The served model's name as the server reports it."""
        return str(self.primary.model_alias)

    @property
    def model(self) -> str:
        """The configured model name."""
        return str(self.primary.model)

    @property
    def wrapped_provider(self) -> object:
        """Slots and token counts are the primary's (`slot_affinity`, `token_counter`)."""
        return self.primary

    @property
    def refresh(self) -> Callable[[], Awaitable[object]]:
        """Re-read the primary's server facts (a server that restarts can change them)."""
        return self.primary.refresh  # type: ignore[no-any-return]

    @property
    def _primary_text(self) -> TextProvider:
        """The primary through the TextProvider protocol (its methods, typed)."""
        provider: TextProvider = self.primary
        return provider

    async def context_window(self) -> int | None:
        return await self._primary_text.context_window()

    async def describe(self) -> dict[str, object]:
        return await self._primary_text.describe()

    def unavailable_hint(self) -> str:
        pid = self._last_unavailable or self.registry.active_id
        try:
            return str(self.registry.get(pid).unavailable_hint())
        except Exception:
            return str(self.primary.unavailable_hint())

    # -- completions ----------------------------------------------------------------------------
    async def complete(self, request: CompletionRequest, on_delta: DeltaCallback | None = None) -> Completion:
        return await self.complete_for(None, request, on_delta)

    async def complete_for(self, session_id: str | None, request: CompletionRequest,
                           on_delta: DeltaCallback | None = None, *, on_notice: NoticeSink | None = None,
                           on_usage: UsageSink | None = None) -> Completion:
        async def attempt(provider_id: str, flag: LiveFlag) -> Completion:
            provider, transport = self._link(provider_id)
            shaped = await self.shaper.shape(request, transport, provider_id, provider,
                                             primary=provider_id == self.registry.active_id, session_id=session_id)
            forward = None
            if on_delta is not None:
                def forward(text: str) -> None:
                    if text:
                        flag.live = True
                    on_delta(repair_text(text))
            try:
                # model text is repaired here, at the boundary, for every caller (memory phases,
                # compaction) and not only the agent loop: a lone surrogate is bad model output
                completion = repair_completion(await provider.complete(shaped, forward))
            except ProviderUnavailableError:
                self._last_unavailable = provider_id
                raise
            served = stamp_served(completion, provider_id, transport)
            if on_usage is not None:
                on_usage(provider_id, served)
            return served

        def notice(n: SwitchNotice) -> None:
            for sink in (self.notice_sink, on_notice):
                if sink is not None:
                    sink(n)

        return await run_with_fallback(self.chain, attempt, session_id, judge=_judge, on_notice=notice)

    def _link(self, provider_id: str) -> tuple[Any, str]:
        """The built provider and its transport; a link that cannot be built is unavailable."""
        try:
            return self.registry.get(provider_id), self.registry.transport_for(provider_id)
        except ProviderError:
            raise
        except Exception as exc:
            raise ProviderUnavailableError(f"provider {provider_id!r} could not be set up: {exc}",
                                           status=None) from exc

    def for_session(self, session_id: str, on_notice: NoticeSink | None = None,
                    on_usage: UsageSink | None = None) -> SessionProvider:
        return SessionProvider(self, session_id, on_notice, on_usage)

    async def close(self) -> None:
        await self.registry.close()


class SessionProvider:
    """The seam as one session's steps see it: completions use that session's breaker
    partition, notices and usage go to that session's sinks. It is a TextProvider with every
    member spelled out; the seam's facts are read through, and `close` leaves the seam open
    (the runtime owns it)."""

    def __init__(self, seam: FallbackTextProvider, session_id: str, on_notice: NoticeSink | None,
                 on_usage: UsageSink | None) -> None:
        self._seam = seam
        self.session_id = session_id
        self._on_notice = on_notice
        self._on_usage = on_usage

    @property
    def capabilities(self) -> Any:
        return self._seam.capabilities

    @property
    def mode(self) -> str:
        return self._seam.mode

    async def complete(self, request: CompletionRequest, on_delta: DeltaCallback | None = None) -> Completion:
        return await self._seam.complete_for(self.session_id, request, on_delta, on_notice=self._on_notice,
                                             on_usage=self._on_usage)

    async def context_window(self) -> int | None:
        return await self._seam.context_window()

    @property
    def wrapped_provider(self) -> object:
        return self._seam

    async def describe(self) -> dict[str, object]:
        return await self._seam.describe()

    def unavailable_hint(self) -> str:
        return self._seam.unavailable_hint()

    async def close(self) -> None:
        return None
