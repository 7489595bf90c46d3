"""The `llm` block: entries, active ids, toolTransport and fallback settings, checked at parse time."""

from __future__ import annotations

import json

import pytest

from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_file import load_config
from atomic_agent.providers.llm_config import (
    DEFAULT_COOLDOWN_MS,
    LLM_CONFIG_BLOCK,
    LlmConfig,
    read_llm_config,
    structure_llm_block,
    unstructure_llm_block,
)

ENTRY = {"id": "or", "kind": "openai-compatible", "preset": "openrouter", "model": "x/y", "customKnob": 1}


def test_defaults_match_the_guide():
    cfg = structure_llm_block({})
    assert cfg.providers == () and cfg.tool_transport == "auto" and cfg.cost_tracking is True
    fb = cfg.fallback
    assert fb.chain == () and fb.append_local is True and fb.failure_threshold == 3
    assert fb.cooldown_ms == DEFAULT_COOLDOWN_MS == (30_000, 60_000, 300_000)
    assert fb.probe_throttle_ms == 300_000 and fb.failure_window_ms == 86_400_000


def test_entries_keep_kind_specific_keys_verbatim():
    cfg = structure_llm_block({"providers": [ENTRY]})
    assert cfg.providers[0] == ENTRY
    assert unstructure_llm_block(cfg)["providers"] == [ENTRY]


def test_decreasing_cooldown_ladder_is_rejected_at_parse_time():
    with pytest.raises(ConfigError) as info:
        structure_llm_block({"fallback": {"cooldownMs": [60000, 30000]}}, "/s/config.json")
    assert info.value.location == "llm.fallback.cooldownMs" and "non-decreasing" in str(info.value)
    assert structure_llm_block({"fallback": {"cooldownMs": [30000, 30000, 90000]}}).fallback.cooldown_ms[-1] == 90000


def test_unknown_fallback_chain_ids_are_rejected_at_parse_time():
    with pytest.raises(ConfigError) as info:
        structure_llm_block({"providers": [ENTRY], "fallback": {"chain": ["or", "ghost"]}})
    assert info.value.location == "llm.fallback.chain" and "ghost" in str(info.value)


def test_active_ids_must_name_configured_entries():
    with pytest.raises(ConfigError, match="activeTextProvider"):
        structure_llm_block({"providers": [ENTRY], "activeTextProvider": "nope"})
    with pytest.raises(ConfigError, match="activeEmbeddingProvider"):
        structure_llm_block({"providers": [ENTRY], "activeEmbeddingProvider": "nope"})


@pytest.mark.parametrize("providers,needle,location", [
    ([{"kind": "x"}], "`id`", "llm.providers"),
    ([{"id": "a"}], "`kind`", "llm.providers"),
    ([{"id": "a", "kind": "k"}, {"id": "a", "kind": "k"}], "distinct ids", "llm.providers"),
    (["a"], "expected a mapping", "llm.providers[0]"),
])
def test_bad_entries_are_named(providers, needle, location):
    with pytest.raises(ConfigError) as info:
        structure_llm_block({"providers": providers})
    assert needle in str(info.value) and info.value.location == location


def test_misspelled_key_inside_the_block_is_an_error_and_tool_transport_is_checked():
    with pytest.raises(ConfigError, match="activeTextProvidr"):
        structure_llm_block({"activeTextProvidr": "or"})
    with pytest.raises(ConfigError, match="toolTransport"):
        structure_llm_block({"toolTransport": "json"})


def test_read_from_an_unregistered_block_and_from_the_registered_block_agree(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"version": 2, "llm": {"providers": [ENTRY]}}))
    unregistered = read_llm_config(load_config(tmp_path, {}, environ={}, write=False))
    registered_cfg = load_config(tmp_path, {"llm": LLM_CONFIG_BLOCK}, environ={}, write=False)
    assert isinstance(registered_cfg.block("llm"), LlmConfig)
    assert read_llm_config(registered_cfg) == unregistered


def test_registered_block_reports_bad_values_at_load_time(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"version": 2, "llm": {"fallback": {"cooldownMs": [5, 1]}}}))
    with pytest.raises(ConfigError, match="non-decreasing"):
        load_config(tmp_path, {"llm": LLM_CONFIG_BLOCK}, environ={}, write=False)


def test_the_core_registers_the_llm_block_with_the_loader(tmp_path):
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.testing.runtime_kit import fresh_plugin_host

    (tmp_path / "config.json").write_text(json.dumps({"version": 2, "llm": {"providers": [ENTRY]}}))
    ctx = boot(tmp_path, environ={}, host=fresh_plugin_host())
    assert isinstance(ctx.config.block("llm"), LlmConfig)
    assert read_llm_config(ctx.config).providers == (ENTRY,)
