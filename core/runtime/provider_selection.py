"""Compose the runtime's text provider: registry (kinds + `llm` entries) behind the fallback seam.

With no `llm` block in config.json, one entry of the default local kind (llama-server,
registered so by its plugin) is synthesised, so a
local-only install needs no provider configuration at all and its chain is that one link.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from atomic_agent.providers.fallback_provider import FallbackTextProvider, RequestShaper
from atomic_agent.llm.model_profile import PLAIN_TEXT_PROFILE, ModelProfile
from atomic_agent.plugin_host.collect_registrations import collect_records
from atomic_agent.plugin_host.plugin_host import PluginHost
from atomic_agent.providers.llm_config import read_llm_config
from atomic_agent.providers.provider_registry import ProviderConfigError, ProviderRegistry
from atomic_agent.hook_records import ProviderKind

__all__ = ["NoProviderError", "build_provider_registry", "build_runtime_provider", "provider_kinds"]

NoProviderError = ProviderConfigError  # the name earlier callers caught


def provider_kinds(host: PluginHost) -> dict[str, ProviderKind]:
    return {k.name: k for k in collect_records(host, "register_providers", ProviderKind)}


def build_provider_registry(host: PluginHost, runtime: Any) -> ProviderRegistry:
    return ProviderRegistry(provider_kinds(host), read_llm_config(runtime.config), runtime)


def build_runtime_provider(host: PluginHost, runtime: Any,
                           profile: Callable[[], ModelProfile | None] = lambda: None) -> FallbackTextProvider:
    """The seam `runtime.provider` returns. The active provider is built right away so a
    misconfigured entry fails at startup with its own message, not inside the first turn."""
    registry = build_provider_registry(host, runtime)
    registry.active_text()

    def grammar() -> str | None:
        from atomic_agent.runtime.prompt_plan import grammar_for

        return grammar_for(runtime.registry, profile() or PLAIN_TEXT_PROFILE,
                           runtime.config.agent.max_parallel_tool_calls)

    shaper = RequestShaper(lambda: tuple(runtime.registry.specs()), grammar)
    return FallbackTextProvider(registry, shaper)
