"""The effective chain: active first, declared links, local last (fallback invariant 7)."""

from __future__ import annotations

from atomic_agent.plugins.openai_compatible.fallback_commands import declared_links
from atomic_agent.providers.fallback_chain import resolve_fallback_chain
from atomic_agent.providers.llm_config import FallbackConfig

IDS = ["or", "groq", "local"]


def test_append_local_appends_the_local_provider_when_configured():
    assert resolve_fallback_chain(FallbackConfig(chain=("or", "groq")), IDS, "or", "local") == ("or", "groq", "local")


def test_append_local_adds_nothing_without_a_local_provider_or_when_off():
    assert resolve_fallback_chain(FallbackConfig(chain=("or", "groq")), ["or", "groq"], "or", None) == ("or", "groq")
    assert resolve_fallback_chain(FallbackConfig(chain=("or", "groq"), append_local=False), IDS, "or",
                                  "local") == ("or", "groq")


def test_local_is_not_appended_twice():
    assert resolve_fallback_chain(FallbackConfig(chain=("or", "local", "groq")), IDS, "or", "local") == (
        "or", "local", "groq")


def test_chain_defaults_to_the_active_provider():
    assert resolve_fallback_chain(FallbackConfig(append_local=False), IDS, "groq", "local") == ("groq",)


def test_the_active_provider_is_hoisted_to_the_head():
    assert resolve_fallback_chain(FallbackConfig(chain=("or", "groq")), IDS, "groq", "local") == (
        "groq", "or", "local")


def test_ids_no_longer_configured_are_dropped_at_resolve_time():
    assert resolve_fallback_chain(FallbackConfig(chain=("or", "gone")), IDS, "or", None) == ("or",)


def test_declared_links_leave_out_the_synthesised_local_tail():
    fb = FallbackConfig(chain=("or", "groq"))
    effective = resolve_fallback_chain(fb, IDS, "or", "local")
    assert declared_links(effective, fb, "local") == ("or", "groq")
    assert resolve_fallback_chain(FallbackConfig(chain=declared_links(effective, fb, "local")), IDS, "or",
                                  "local") == effective  # round trip never doubles the tail
