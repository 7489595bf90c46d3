"""The assembled grammar is accepted by the real llama-server and constrains its output."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest

from atomic_agent.llm.model_profile import (
    GEMMA4_THINK_PROFILE,
    PLAIN_CHATML_PROFILE,
    QWEN_THINK_PROFILE,
    ModelProfile,
)
from atomic_agent.prompt.build_grammar import build_tool_call_grammar

pytestmark = pytest.mark.llama_server

TOOLS = ("reply", "os.fs.read", "finish")
STABLE_PREFIX = (
    "You are a tool-calling agent. Answer only with a JSON array of tool calls, for example\n"
    '[{"tool": "reply", "args": {"text": "hi"}}]\n'
)
TAIL = "### conversation\nuser: say hi\n### respond\nRespond now.\n"


def _complete(base_url: str, profile: ModelProfile, n_predict: int) -> httpx.Response:
    body: dict[str, Any] = {
        "prompt": profile.frame_prompt(STABLE_PREFIX, TAIL),
        "grammar": build_tool_call_grammar(TOOLS, profile),
        "n_predict": n_predict,
        "temperature": 0.0,
        "seed": 42,
        "cache_prompt": True,
        "stream": False,
    }
    return httpx.post(f"{base_url}/completion", json=body, timeout=120.0)


@pytest.mark.parametrize("profile", [PLAIN_CHATML_PROFILE, QWEN_THINK_PROFILE, GEMMA4_THINK_PROFILE],
                         ids=lambda p: p.name)
def test_server_accepts_each_profile_grammar(llama_server: Any, profile: ModelProfile) -> None:
    response = _complete(llama_server.base_url, profile, n_predict=16)
    assert response.status_code == 200, response.text[:400]
    if profile.reasoning_open_emitted_by_model:
        # the grammar makes the model write its own channel open first
        content = response.json()["content"]
        assert profile.reasoning_open.startswith(content) or content.startswith(profile.reasoning_open)


def test_plain_grammar_output_is_a_tool_call_array(llama_server: Any) -> None:
    response = _complete(llama_server.base_url, PLAIN_CHATML_PROFILE, n_predict=96)
    assert response.status_code == 200, response.text[:400]
    calls = json.loads(response.json()["content"])
    assert isinstance(calls, list) and 1 <= len(calls) <= 16
    for call in calls:
        assert set(call) == {"tool", "args"}
        assert call["tool"] in TOOLS
        assert isinstance(call["args"], dict)


def test_broken_grammar_is_rejected_with_http_400(llama_server: Any) -> None:
    # guards the premise of the other tests: the server does parse what it is sent
    body = {"prompt": "hi", "grammar": "root ::= undefined-rule", "n_predict": 4}
    response = httpx.post(f"{llama_server.base_url}/completion", json=body, timeout=60.0)
    assert response.status_code == 400
