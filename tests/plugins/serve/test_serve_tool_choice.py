"""OpenAI's `tool_choice` on serve's chat request: a named function forces the turn's first
step to call that tool of the agent (the runtime's tool_choice); anything else the runtime
cannot honour is a 400 before anything is written."""

from __future__ import annotations

from pathlib import Path

import httpx
import openai
import pytest

from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import WAIT_S, ServeHarness

HI = [{"role": "user", "content": "read a"}]


def forced(name: str) -> dict:
    return {"type": "function", "function": {"name": name}}


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "read it"}))])


@pytest.fixture
def serve(tmp_path: Path, provider: ScriptedProvider):
    harness = ServeHarness(tmp_path, provider)
    yield harness
    harness.stop()


def client(serve: ServeHarness) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key="unused", max_retries=0, timeout=WAIT_S)


def test_a_named_function_forces_only_the_first_steps_grammar(serve: ServeHarness, provider: ScriptedProvider):
    completion = client(serve).chat.completions.create(model="atomic-agent", messages=HI,
                                                       tool_choice=forced("t.read"))
    assert completion.choices[0].message.content == "read it"
    first, second = provider.requests[0].grammar, provider.requests[1].grammar
    assert first.splitlines()[-1] == 'step-tool-name ::= "\\"t.read\\""' and "final-call" not in first
    assert '"\\"reply\\""' in second


def test_auto_tool_choice_leaves_the_grammar_alone(serve: ServeHarness, provider: ScriptedProvider):
    client(serve).chat.completions.create(model="atomic-agent", messages=HI, tool_choice="auto")
    assert '"\\"reply\\""' in provider.requests[0].grammar


def test_an_unknown_tool_is_a_400_naming_it_and_nothing_is_written(serve: ServeHarness, provider: ScriptedProvider):
    with pytest.raises(openai.BadRequestError) as raised:
        client(serve).chat.completions.create(model="atomic-agent", messages=HI, tool_choice=forced("t.raed"))
    error = raised.value.body
    assert raised.value.status_code == 400 and error["code"] == "unknown_tool"
    assert "'t.raed' is not a tool of this agent" in error["message"] and "t.read" in error["message"]  # near names
    assert provider.requests == [] and serve.runtime.sessions.list() == []


@pytest.mark.parametrize("value, says", [
    ("none", "'none' is not supported"),
    ("required", "'required' is not supported"),
    ({"type": "function", "function": {"name": ""}}, "function.name must be a non-empty tool name"),
    ({"type": "function"}, "must be \"auto\" or"),
    ({"type": "custom", "custom": {"name": "t.read"}}, "must be \"auto\" or"),
    (3, "must be \"auto\" or"),
])
def test_tool_choice_values_the_runtime_cannot_honour_are_refused(serve: ServeHarness, provider: ScriptedProvider,
                                                                  value: object, says: str):
    answer = httpx.post(f"{serve.base_url}/v1/chat/completions", json={"messages": HI, "tool_choice": value},
                        timeout=WAIT_S)
    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["code"] == "invalid_value" and error["message"].startswith("tool_choice: ")
    assert says in error["message"]
    assert provider.requests == [] and serve.runtime.sessions.list() == []


def test_an_idempotency_key_reused_with_another_tool_choice_is_refused(serve: ServeHarness):
    url = f"{serve.base_url}/v1/chat/completions"
    first = httpx.post(url, json={"messages": HI, "tool_choice": forced("t.read")}, timeout=WAIT_S,
                       headers={"Idempotency-Key": "key-1"})
    assert first.status_code == 200
    other = httpx.post(url, json={"messages": HI}, timeout=WAIT_S, headers={"Idempotency-Key": "key-1"})
    assert other.status_code == 422 and other.json()["error"]["code"] == "idempotency_key_reused"
