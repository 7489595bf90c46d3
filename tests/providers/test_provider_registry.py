"""ProviderRegistry: kinds from plugins, entries by id, transport resolution, hot-swap."""

from __future__ import annotations

import attrs
import pytest

from atomic_agent.providers.llm_config import structure_llm_block
from atomic_agent.providers.provider_registry import LOCAL_ID, ProviderConfigError, ProviderRegistry

from .provider_kit import Built, scripted_kind


def registry(llm: dict, built: Built | None = None) -> tuple[ProviderRegistry, Built]:
    built = built or Built()
    kinds = {k.name: k for k in (scripted_kind("llama-server", "grammar", built),
                                 scripted_kind("cloudish", "native_tools", built))}
    return ProviderRegistry(kinds, structure_llm_block(llm), runtime=None), built


def test_no_llm_block_synthesises_one_local_llama_server_entry():
    reg, built = registry({})
    assert reg.ids == [LOCAL_ID] and reg.active_id == LOCAL_ID
    assert reg.entry(LOCAL_ID) == {"id": "local", "kind": "llama-server"}
    reg.active_text()
    assert built.entries["local"]["toolTransport"] == "grammar"
    assert reg.local_id() == LOCAL_ID


def test_active_text_provider_defaults_to_the_first_entry():
    reg, _ = registry({"providers": [{"id": "a", "kind": "cloudish"}, {"id": "b", "kind": "llama-server"}]})
    assert reg.active_id == "a" and reg.local_id() == "b"


def test_entries_build_by_id_once():
    reg, built = registry({"providers": [{"id": "a", "kind": "cloudish", "model": "m"}]})
    assert reg.get("a") is reg.get("a")
    assert len(built.by_id["a"]) == 1 and built.entries["a"]["model"] == "m"


def test_unknown_kind_names_the_registered_kinds():
    reg, _ = registry({"providers": [{"id": "a", "kind": "martian"}]})
    with pytest.raises(ProviderConfigError) as info:
        reg.active_text()
    assert "martian" in str(info.value) and "cloudish, llama-server" in str(info.value)


def test_unknown_id_is_named():
    reg, _ = registry({})
    with pytest.raises(ProviderConfigError, match="ghost"):
        reg.get("ghost")


def test_tool_transport_auto_follows_the_provider_kind():
    reg, _ = registry({"providers": [{"id": "a", "kind": "cloudish"}, {"id": "b", "kind": "llama-server"}]})
    assert reg.transport_for("a") == "native_tools" and reg.transport_for("b") == "grammar"


def test_global_tool_transport_applies_to_the_active_provider_only():
    reg, built = registry({"providers": [{"id": "a", "kind": "cloudish"}, {"id": "b", "kind": "cloudish"}],
                           "toolTransport": "grammar"})
    assert reg.transport_for("a") == "grammar" and reg.transport_for("b") == "native_tools"
    assert reg.get("a").capabilities.transport == "grammar"


def test_a_transport_the_kind_cannot_speak_is_a_clear_error():
    from atomic_agent.testing.scripted_provider import ScriptedProvider

    built = Built()
    stubborn = scripted_kind("grammar-only", "grammar", built, make=lambda e: ScriptedProvider(transport="grammar"))
    reg = ProviderRegistry({stubborn.name: stubborn},
                           structure_llm_block({"providers": [{"id": "g", "kind": "grammar-only"}],
                                                "toolTransport": "native_tools"}), runtime=None)
    with pytest.raises(ProviderConfigError) as info:
        reg.active_text()
    assert "cannot use toolTransport 'native_tools'" in str(info.value)


async def test_set_active_switches_without_restart_and_closes_the_previous():
    reg, built = registry({"providers": [{"id": "a", "kind": "cloudish"}, {"id": "b", "kind": "cloudish"}]})
    first = reg.active_text()
    seen: list[str] = []
    reg.on_active_changed(seen.append)
    await reg.set_active("b")
    assert reg.active_id == "b" and reg.active_text() is built.last("b")
    assert first.closed and seen == ["b"]


async def test_set_active_to_an_unknown_id_changes_nothing():
    reg, _ = registry({"providers": [{"id": "a", "kind": "cloudish"}]})
    provider = reg.active_text()
    with pytest.raises(ProviderConfigError):
        await reg.set_active("nope")
    assert reg.active_id == "a" and reg.active_text() is provider and not provider.closed


def test_a_new_kind_needs_only_a_plugin_registration():
    """No central switch: any registered kind name is buildable from config."""
    built = Built()
    novel = scripted_kind("brand-new-kind", "native_tools", built)
    reg = ProviderRegistry({novel.name: novel}, structure_llm_block(
        {"providers": [{"id": "n", "kind": "brand-new-kind"}]}), runtime=None)
    assert reg.active_text() is built.last("n")


async def test_close_closes_every_built_provider():
    reg, built = registry({"providers": [{"id": "a", "kind": "cloudish"}, {"id": "b", "kind": "llama-server"}]})
    reg.get("a"), reg.get("b")
    await reg.close()
    assert built.last("a").closed and built.last("b").closed


def test_the_default_local_kind_is_whatever_a_plugin_registers_as_such() -> None:
    built = Built()
    other = attrs.evolve(scripted_kind("some-local-engine", "grammar", built), default_local=True)
    reg = ProviderRegistry({other.name: other}, structure_llm_block({}), runtime=None)
    assert reg.entry(LOCAL_ID) == {"id": "local", "kind": "some-local-engine"} and reg.local_id() == LOCAL_ID


def test_two_default_local_kinds_are_refused_naming_both() -> None:
    built = Built()
    kinds = [attrs.evolve(scripted_kind(n, "grammar", built), default_local=True) for n in ("engine-a", "engine-b")]
    with pytest.raises(ProviderConfigError, match="'engine-a', 'engine-b'"):
        ProviderRegistry({k.name: k for k in kinds}, structure_llm_block({}), runtime=None)


def test_no_providers_and_no_default_local_kind_says_which_plugin_is_missing() -> None:
    cloud = scripted_kind("cloudish", "native_tools", Built())
    with pytest.raises(ProviderConfigError, match="llama_server plugin"):
        ProviderRegistry({cloud.name: cloud}, structure_llm_block({}), runtime=None)
