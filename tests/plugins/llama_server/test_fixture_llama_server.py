"""The `llama_server` pytest fixture: a real server with the starter model, or a loud failure."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from atomic_agent.plugins.llama_server.testing.llama_fixture import LlamaServerHandle, start_or_fail


def test_fixture_server_has_two_slots_of_4096_tokens(llama_server: LlamaServerHandle) -> None:
    props = httpx.get(f"{llama_server.base_url}/props", timeout=10).json()
    assert props["default_generation_settings"]["n_ctx"] == 4096 and props["total_slots"] == 2
    assert (llama_server.n_ctx, llama_server.total_slots) == (4096, 2)
    assert Path(props["model_path"]) == llama_server.model_path
    assert llama_server.model_path.name == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert llama_server.base_url == f"http://127.0.0.1:{llama_server.port}"
    assert llama_server.model_alias == "smollm2-135m-instruct"


def test_fixture_server_answers_a_completion(llama_server: LlamaServerHandle) -> None:
    body = {"prompt": "<|im_start|>user\nSay hi<|im_end|>\n<|im_start|>assistant\n", "n_predict": 4,
            "temperature": 0, "seed": 1, "cache_prompt": False}
    reply = httpx.post(f"{llama_server.base_url}/completion", json=body, timeout=60).json()
    assert isinstance(reply["content"], str) and reply["tokens_predicted"] >= 1


def test_tests_using_the_fixture_carry_the_marker(llama_server: LlamaServerHandle, request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("llama_server") is not None


def test_unavailable_server_fails_loudly_instead_of_skipping(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_LLAMA_BINARY", str(tmp_path / "no-such-llama-server"))
    with pytest.raises(pytest.fail.Exception) as err:
        start_or_fail(tmp_path / "state")
    assert "could not start a real llama-server" in str(err.value) and "llama.binary is set to" in str(err.value)
