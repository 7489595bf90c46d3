"""The llm_unavailable hint tells the user what to do in each llama-server mode."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider

URL = "http://127.0.0.1:19091"


async def test_managed_hint_points_at_llama_start() -> None:
    provider = LlamaServerProvider(URL, "managed")
    hint = provider.unavailable_hint()
    await provider.close()
    assert "atomic-agent llama start" in hint
    assert URL in hint


async def test_external_hint_names_the_url_setting_and_env_var() -> None:
    provider = LlamaServerProvider(URL, "external")
    hint = provider.unavailable_hint()
    await provider.close()
    assert "llama.url" in hint and "ATOMIC_AGENT_LLAMA_URL" in hint
    assert URL in hint
    assert "llama start" not in hint


def test_unknown_mode_is_rejected() -> None:
    with pytest.raises(ValueError, match="managed, external"):
        LlamaServerProvider(URL, "cloud")
