"""The `llama` config block and URL/mode resolution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from atomic_agent.api import ConfigBlock, ConfigError
from atomic_agent.config.config_file import load_config
from atomic_agent.plugins.llama_server.llama_config import LlamaConfig, effective_llama_url

BLOCKS = {"llama": ConfigBlock(key="llama", cls=LlamaConfig, plugin="llama_server")}


def _load(tmp_path: Path, raw: dict | None = None, env: dict[str, str] | None = None) -> LlamaConfig:
    if raw is not None:
        (tmp_path / "config.json").write_text(json.dumps({"version": 1, **raw}))
    return load_config(tmp_path, BLOCKS, environ=env or {}).block("llama")


def test_defaults_match_the_managed_local_server(tmp_path: Path) -> None:
    cfg = _load(tmp_path)
    assert (cfg.url, cfg.host, cfg.port, cfg.model, cfg.binary) == ("", "127.0.0.1", 19091, "smollm2-135m-instruct", "")
    assert (cfg.ctx_size, cfg.parallel, cfg.threads) == (8192, 2, 0)  # 0: cores - 1
    assert (cfg.completion_retries, cfg.completion_retry_backoff_ms, cfg.max_tokens) == (3, 150, 512)
    assert cfg.temperature == 0.2 and cfg.request_timeout_s == 120 and cfg.extra_args == ()


def test_camel_case_keys_on_disk_are_read(tmp_path: Path) -> None:
    cfg = _load(tmp_path, {"llama": {"ctxSize": 4096, "extraArgs": ["--cache-reuse", "64"], "temperature": 0}})
    assert cfg.ctx_size == 4096 and cfg.extra_args == ("--cache-reuse", "64") and cfg.temperature == 0


def test_env_overrides_url_and_port(tmp_path: Path) -> None:
    cfg = _load(tmp_path, env={"ATOMIC_AGENT_LLAMA_URL": "http://127.0.0.1:8080", "ATOMIC_AGENT_LLAMA_PORT": "19100"})
    assert cfg.url == "http://127.0.0.1:8080" and cfg.port == 19100


def test_out_of_range_port_in_file_is_a_config_error_naming_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, {"llama": {"port": 70000}})
    assert "llama.port" in str(err.value)


def test_misspelled_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, {"llama": {"prot": 1}})
    assert "ctxSize" in str(err.value)  # the fix lists the allowed keys


def test_no_url_means_managed_on_host_and_port() -> None:
    assert effective_llama_url(LlamaConfig(port=19200), environ={}) == ("http://127.0.0.1:19200", "managed")


def test_configured_url_means_external_without_trailing_slash() -> None:
    assert effective_llama_url(LlamaConfig(url="http://10.0.0.5:8080/"), environ={}) == ("http://10.0.0.5:8080", "external")


def test_env_url_wins_over_the_config_value() -> None:
    env = {"ATOMIC_AGENT_LLAMA_URL": "http://127.0.0.1:9999"}
    assert effective_llama_url(LlamaConfig(url="http://other:1"), environ=env) == ("http://127.0.0.1:9999", "external")


def test_ipv6_host_gets_brackets() -> None:
    assert effective_llama_url(LlamaConfig(host="::1", port=5), environ={})[0] == "http://[::1]:5"
