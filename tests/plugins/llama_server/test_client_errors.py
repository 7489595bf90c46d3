"""Error answers and unreachable servers become ProviderError / ProviderUnavailableError."""

from __future__ import annotations

import socket

import httpx
import pytest

from atomic_agent.api import CompletionRequest, ProviderError, ProviderUnavailableError
from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer, HttpFault


async def no_sleep(seconds: float) -> None:
    return None


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens here once the socket is closed


@pytest.mark.parametrize("stream", [False, True])
async def test_grammar_error_envelope_becomes_provider_error_fields(stream: bool) -> None:
    with FakeLlamaServer(script=[HttpFault.grammar_error()]) as fake:
        client = LlamaServerClient(fake.base_url)
        with pytest.raises(ProviderError) as caught:
            await client.complete(CompletionRequest(prompt="p", grammar="root ::= (", stream=stream))
        await client.aclose()
    error = caught.value
    assert not isinstance(error, ProviderUnavailableError)
    assert (error.status, error.error_type) == (400, "invalid_request_error")
    assert error.url == fake.base_url + "/completion"
    assert "failed to parse grammar" in str(error)
    assert error.body["error"]["code"] == 400


async def test_context_overflow_keeps_prompt_tokens_and_n_ctx_in_the_body() -> None:
    with FakeLlamaServer(n_ctx=64) as fake:
        client = LlamaServerClient(fake.base_url)
        with pytest.raises(ProviderError) as caught:
            await client.complete(CompletionRequest(prompt="y" * 800))
        await client.aclose()
    assert caught.value.error_type == "exceed_context_size_error"
    assert (caught.value.body["error"]["n_prompt_tokens"], caught.value.body["error"]["n_ctx"]) == (200, 64)


async def test_connection_refused_is_unavailable_with_no_status() -> None:
    url = closed_port_url()
    client = LlamaServerClient(url, retries=0)
    with pytest.raises(ProviderUnavailableError) as caught:
        await client.complete(CompletionRequest(prompt="p"))
    await client.aclose()
    assert caught.value.status is None
    assert caught.value.url == url + "/completion"
    assert url in str(caught.value)


async def test_loading_model_503_is_unavailable_after_the_retries() -> None:
    with FakeLlamaServer() as fake:
        fake.loading = True
        client = LlamaServerClient(fake.base_url, retries=1, sleep=no_sleep)
        with pytest.raises(ProviderUnavailableError) as caught:
            await client.props()
        await client.aclose()
    assert (caught.value.status, caught.value.error_type) == (503, "unavailable_error")


async def test_non_json_error_body_still_reports_status_and_text() -> None:
    transport = httpx.MockTransport(lambda request: httpx.Response(502, text="Bad Gateway from proxy"))
    client = LlamaServerClient("http://127.0.0.1:9", retries=0, transport=transport)
    with pytest.raises(ProviderError) as caught:
        await client.complete(CompletionRequest(prompt="p", stream=False))
    await client.aclose()
    assert (caught.value.status, caught.value.error_type, caught.value.body) == (502, None, "Bad Gateway from proxy")


def test_url_without_scheme_is_rejected_with_an_example() -> None:
    with pytest.raises(ValueError, match="http://127.0.0.1:8080"):
        LlamaServerClient("127.0.0.1:8080")
