"""The official `openai` client against `serve`: create, stream, models, errors, sessions, auth.
Every request is one agent turn; nothing is proxied."""

from __future__ import annotations

from pathlib import Path

import openai
import pytest

from atomic_agent.api import ProviderUnavailableError
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.plugins.serve.serve_harness import ServeHarness

HI = [{"role": "system", "content": "ignored"}, {"role": "user", "content": "hi there"}]


@pytest.fixture
def provider() -> ScriptedProvider:
    return ScriptedProvider([calls(("t.read", {"path": "a"})), calls(("reply", {"text": "hello from the agent"}))])


@pytest.fixture
def serve(tmp_path: Path, provider: ScriptedProvider):
    harness = ServeHarness(tmp_path, provider)
    yield harness
    harness.stop()


def client(serve: ServeHarness, key: str = "unused") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key=key, max_retries=0, timeout=60)


def test_chat_completion_is_one_agent_turn(serve: ServeHarness, provider: ScriptedProvider):
    raw = client(serve).chat.completions.with_raw_response.create(model="atomic-agent", messages=HI)
    completion = raw.parse()
    assert completion.choices[0].message.content == "hello from the agent"
    assert completion.choices[0].finish_reason == "stop" and completion.object == "chat.completion"
    session_id = raw.headers["x-atomic-session"]
    entries = serve.runtime.sessions.load(session_id).entries
    assert [e.text for e in entries if e.kind == "user"] == ["hi there"]  # the last user message only
    assert len(provider.requests) == 2  # the agent's own two steps, no proxied call


def test_streamed_chat_completion_ends_cleanly(serve: ServeHarness):
    stream = client(serve).chat.completions.create(model="atomic-agent", messages=HI, stream=True)
    chunks = list(stream)
    assert chunks[0].choices[0].delta.role == "assistant"
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "hello from the agent"
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.object == "chat.completion.chunk" for c in chunks)


def test_models_lists_the_agent(serve: ServeHarness):
    assert [m.id for m in client(serve).models.list()] == ["atomic-agent"]


def test_header_and_user_field_continue_a_session(serve: ServeHarness, provider: ScriptedProvider):
    provider.script[:] = []  # every turn answers the default reply
    api = client(serve)
    first = api.chat.completions.with_raw_response.create(model="m", messages=HI)
    session_id = first.headers["x-atomic-session"]
    second = api.chat.completions.with_raw_response.create(model="m", messages=HI,
                                                          extra_headers={"X-Atomic-Session": session_id})
    assert second.headers["x-atomic-session"] == session_id
    fresh = api.chat.completions.with_raw_response.create(model="m", messages=HI)
    assert fresh.headers["x-atomic-session"] != session_id  # new per request by default
    by_user = [api.chat.completions.with_raw_response.create(model="m", messages=HI, user="alice")
               .headers["x-atomic-session"] for _ in range(2)]
    assert by_user[0] == by_user[1] != session_id
    as_id = api.chat.completions.with_raw_response.create(model="m", messages=HI, user=session_id)
    assert as_id.headers["x-atomic-session"] == session_id
    assert serve.runtime.sessions.load(session_id).next_turn_index == 3


def test_a_failed_turn_is_an_openai_error_of_type_agent_category_and_not_retried(tmp_path: Path):
    provider = ScriptedProvider([ProviderUnavailableError("connection refused")])
    serve = ServeHarness(tmp_path, provider)
    try:
        api = openai.OpenAI(base_url=f"{serve.base_url}/v1", api_key="x", max_retries=2, timeout=60)
        with pytest.raises(openai.APIStatusError) as caught:
            api.chat.completions.create(model="m", messages=HI)
        assert caught.value.status_code == 503
        body = caught.value.body
        assert body["type"] == "agent.transport" and body["code"] == "step_error:transport"
        assert "connection refused" in body["message"]
        assert len(provider.requests) == 1  # x-should-retry: false kept the client from resending the message
    finally:
        serve.stop()


def test_a_failed_streamed_turn_raises_in_the_client(tmp_path: Path):
    serve = ServeHarness(tmp_path, ScriptedProvider([ProviderUnavailableError("connection refused")]))
    try:
        stream = client(serve).chat.completions.create(model="m", messages=HI, stream=True)
        with pytest.raises(openai.APIError) as caught:
            list(stream)
        assert "connection refused" in caught.value.message
        assert caught.value.body["type"] == "agent.transport"
    finally:
        serve.stop()


def test_bad_requests_get_clear_openai_errors(serve: ServeHarness):
    api = client(serve)
    with pytest.raises(openai.BadRequestError) as no_user:
        api.chat.completions.create(model="m", messages=[{"role": "system", "content": "only system"}])
    assert "role 'user'" in no_user.value.body["message"]
    with pytest.raises(openai.BadRequestError) as tools:
        api.chat.completions.create(model="m", messages=HI, tools=[{"type": "function", "function": {"name": "f"}}])
    assert "client-side tools" in tools.value.body["message"]
    with pytest.raises(openai.NotFoundError) as unknown:
        api.chat.completions.create(model="m", messages=HI, extra_headers={"X-Atomic-Session": "nope"})
    assert unknown.value.body["code"] == "session_not_found"


def test_api_key_makes_every_route_require_bearer_auth(tmp_path: Path, provider: ScriptedProvider):
    serve = ServeHarness(tmp_path, provider, api_key="s3cret")
    try:
        with pytest.raises(openai.AuthenticationError) as caught:
            client(serve, key="wrong").models.list()
        assert caught.value.body["code"] == "invalid_api_key"
        assert [m.id for m in client(serve, key="s3cret").models.list()] == ["atomic-agent"]
        import httpx

        assert httpx.get(f"{serve.base_url}/api/capabilities").status_code == 401
        assert httpx.get(f"{serve.base_url}/api/capabilities",
                         headers={"Authorization": "Bearer s3cret"}).status_code == 200
    finally:
        serve.stop()
