"""LlamaServerProvider: capabilities, n_ctx from /props (cached), tokens, describe, factory."""

from __future__ import annotations

import socket

import pytest

from atomic_agent.api import CompletionRequest, ProviderUnavailableError, TextProvider
from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider, build_llama_provider
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


async def test_provider_implements_the_text_provider_protocol() -> None:
    provider = LlamaServerProvider("http://127.0.0.1:9", "external")
    assert isinstance(provider, TextProvider)
    assert provider.mode == "external"
    await provider.close()


async def test_capabilities_are_grammar_with_slots_and_vision_from_props() -> None:
    with FakeLlamaServer(vision=True) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        before = provider.capabilities
        await provider.refresh()
        after = provider.capabilities
        await provider.close()
    assert (before.transport, before.slot_affinity, before.vision, before.embeddings) == ("grammar", True, False, False)
    assert after.vision is True


async def test_context_window_is_the_per_slot_n_ctx_cached_until_refresh() -> None:
    with FakeLlamaServer(n_ctx=4096, total_slots=2) as fake:
        provider = LlamaServerProvider(fake.base_url, "managed")
        assert await provider.context_window() == 4096
        assert await provider.total_slots() == 2
        fake.n_ctx, fake.total_slots = 2048, 1  # as if restarted with other -c / --parallel
        assert await provider.context_window() == 4096
        assert len([r for r in fake.requests if r.path == "/props"]) == 1
        await provider.refresh()
        assert (await provider.context_window(), await provider.total_slots()) == (2048, 1)
        await provider.close()


async def test_unreachable_server_gives_unknown_facts_not_errors() -> None:
    provider = LlamaServerProvider(closed_port_url(), "external", retries=0)
    assert await provider.context_window() is None
    assert await provider.total_slots() == 1
    assert await provider.count_tokens("hello") is None
    assert (await provider.describe())["reachable"] is False
    assert await provider.health() is False
    with pytest.raises(ProviderUnavailableError):
        await provider.complete(CompletionRequest(prompt="p"))
    await provider.close()


async def test_count_tokens_uses_the_server_tokenizer() -> None:
    with FakeLlamaServer() as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        assert await provider.count_tokens("abcdefghi") == 3
        await provider.close()
        assert fake.requests[-1].path == "/tokenize"


async def test_describe_reports_template_alias_and_modalities() -> None:
    with FakeLlamaServer(chat_template="{{ chatml }}", model_alias="smol", vision=False) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        facts = await provider.describe()
        await provider.close()
    assert facts["chat_template"] == "{{ chatml }}"
    assert facts["model_alias"] == "smol"
    assert facts["modalities"] == {"vision": False, "video": False, "audio": False}
    assert facts["reachable"] is True


async def test_describe_reports_the_parameter_count_from_v1_models_read_once_per_props() -> None:
    with FakeLlamaServer(n_params=134_515_008) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        facts = await provider.describe()
        await provider.describe()
        assert len([r for r in fake.requests if r.path == "/v1/models"]) == 1
        fake.n_params = 7_000_000_000  # as if restarted with another model
        await provider.refresh()
        again = await provider.describe()
        await provider.close()
    assert facts["n_params"] == 134_515_008 and again["n_params"] == 7_000_000_000


async def test_describe_without_a_parameter_count_leaves_it_out() -> None:
    with FakeLlamaServer(model_alias="SmolLM2-135M-Instruct") as fake:  # a meta without n_params
        provider = LlamaServerProvider(fake.base_url, "external")
        facts = await provider.describe()
        await provider.close()
    assert "n_params" not in facts and facts["model_alias"] == "SmolLM2-135M-Instruct"


async def test_describe_survives_a_server_without_v1_models() -> None:
    with FakeLlamaServer(model_alias="old-build", n_params=7_000_000_000) as fake:
        fake.models_route = False
        provider = LlamaServerProvider(fake.base_url, "external", retries=0)
        facts = await provider.describe()
        await provider.close()
    assert any(r.path == "/v1/models" for r in fake.requests)
    assert facts["reachable"] is True and "n_params" not in facts and facts["model_alias"] == "old-build"


async def test_max_tokens_caps_n_predict() -> None:
    with FakeLlamaServer() as fake:
        provider = LlamaServerProvider(fake.base_url, "external", max_tokens=64)
        await provider.complete(CompletionRequest(prompt="p", n_predict=512))
        await provider.complete(CompletionRequest(prompt="p", n_predict=-1))
        await provider.complete(CompletionRequest(prompt="p", n_predict=16))
        await provider.close()
        assert [b["n_predict"] for b in fake.completion_bodies] == [64, 64, 16]


async def test_every_completion_carries_grammar_slot_and_cache_prompt() -> None:
    with FakeLlamaServer(total_slots=2) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        await provider.complete(CompletionRequest(prompt="p", grammar='root ::= "["', slot_id=0))
        await provider.close()
        body = fake.completion_bodies[0]
    assert (body["grammar"], body["id_slot"], body["cache_prompt"]) == ('root ::= "["', 0, True)


async def test_out_of_range_slot_is_refused_once_slots_are_known() -> None:
    with FakeLlamaServer(total_slots=2) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        await provider.refresh()
        with pytest.raises(ValueError, match="-1..1"):
            await provider.complete(CompletionRequest(prompt="p", slot_id=2))
        await provider.close()
        assert fake.completion_bodies == []


async def test_factory_builds_from_a_config_entry() -> None:
    provider = build_llama_provider({"url": "http://127.0.0.1:19091", "mode": "managed", "retries": 1,
                                     "backoffMs": 50, "timeoutS": 30, "maxTokens": 256}, runtime=None)
    assert (provider.url, provider.mode, provider.max_tokens) == ("http://127.0.0.1:19091", "managed", 256)
    assert (provider.client.retries, provider.client.backoff_ms) == (1, 50)
    await provider.close()


def test_factory_rejects_an_entry_without_url() -> None:
    with pytest.raises(ValueError, match="url"):
        build_llama_provider({"mode": "external"}, runtime=None)


def test_factory_rejects_non_numeric_settings() -> None:
    with pytest.raises(ValueError, match="retries"):
        build_llama_provider({"url": "http://127.0.0.1:1", "mode": "external", "retries": "three"}, runtime=None)


async def test_slot_for_is_minus_one_until_the_slot_count_is_known() -> None:
    with FakeLlamaServer(total_slots=3) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        assert (provider.slot_for("s1"), provider.reflection_slot()) == (-1, -1)
        await provider.context_window()
        assert (provider.slot_for("s1"), provider.slot_for("s2"), provider.reflection_slot()) == (0, 1, 2)
        await provider.close()


async def test_session_slot_survives_a_refresh_with_the_same_slot_count() -> None:
    with FakeLlamaServer(total_slots=3) as fake:
        provider = LlamaServerProvider(fake.base_url, "external")
        await provider.refresh()
        provider.slot_for("s1")
        second = provider.slot_for("s2")
        await provider.refresh()
        assert provider.slot_for("s2") == second
        fake.total_slots = 1
        await provider.refresh()
        assert (provider.slot_for("s2"), provider.reflection_slot()) == (0, -1)
        await provider.close()
