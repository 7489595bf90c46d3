"""Vendor presets are data: every one resolves to an openai-compatible endpoint."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.openai_compatible.auth_headers import auth_headers
from atomic_agent.plugins.openai_compatible.endpoint_entry import EntryError, resolve_endpoint
from atomic_agent.plugins.openai_compatible.vendor_presets import PRESETS, PRESETS_BY_ID

REQUIRED = {"openrouter", "openai", "anthropic", "groq", "together", "fireworks", "deepseek", "mistral", "moonshot",
            "qwen", "perplexity", "sambanova", "xai", "gemini", "ollama", "lmstudio", "vllm", "custom"}


def test_the_guide_vendors_all_have_presets():
    assert REQUIRED <= set(PRESETS_BY_ID)


@pytest.mark.parametrize("preset", [p for p in PRESETS if p.id != "custom"], ids=lambda p: p.id)
def test_every_preset_resolves_with_its_key_variable(preset):
    env = {preset.api_key_env: "k"} if preset.api_key_env else {}
    ep = resolve_endpoint({"id": "p", "kind": "openai-compatible", "preset": preset.id, "model": "m"}, env)
    assert ep.base_url == preset.base_url and ep.base_url.startswith(("http://", "https://"))
    assert ep.url("chat/completions") == preset.base_url + "/chat/completions"


def test_anthropic_uses_x_api_key_and_the_version_header():
    ep = resolve_endpoint({"id": "a", "kind": "openai-compatible", "preset": "anthropic"}, {"ANTHROPIC_API_KEY": "k"})
    headers = auth_headers(ep.api_key, ep.api_key_header, ep.headers)
    assert headers["x-api-key"] == "k" and headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in headers


def test_a_missing_key_names_the_variable_and_the_command():
    with pytest.raises(EntryError) as info:
        resolve_endpoint({"id": "or", "kind": "openai-compatible", "preset": "openrouter"}, {})
    assert "$OPENROUTER_API_KEY" in str(info.value) and "providers key or" in str(info.value)


def test_local_presets_need_no_key():
    ep = resolve_endpoint({"id": "o", "kind": "openai-compatible", "preset": "ollama"}, {})
    assert ep.api_key == "" and ep.local


def test_custom_needs_a_base_url_and_unknown_keys_are_named():
    with pytest.raises(EntryError, match="baseUrl"):
        resolve_endpoint({"id": "c", "kind": "openai-compatible", "model": "m"}, {})
    with pytest.raises(EntryError, match="modle"):
        resolve_endpoint({"id": "c", "kind": "openai-compatible", "baseUrl": "http://h/v1", "modle": "m"}, {})


def test_the_key_is_never_in_the_endpoint_repr():
    ep = resolve_endpoint({"id": "o", "kind": "openai-compatible", "preset": "openai"}, {"OPENAI_API_KEY": "sk-secret"})
    assert "sk-secret" not in repr(ep)
