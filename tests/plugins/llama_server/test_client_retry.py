"""Transport retry: bounded, exponential with ±20 % jitter, only network errors and 5xx, and
never once a stream has begun."""

from __future__ import annotations

import asyncio
import socket

import httpx
import pytest

from atomic_agent.api import CompletionRequest, ProviderError, ProviderUnavailableError
from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient
from atomic_agent.plugins.llama_server.testing.fake_llama_server import DropConnection, FakeLlamaServer, HttpFault


class SleepLog:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def client_for(url: str, sleeps: SleepLog, **kw: object) -> LlamaServerClient:
    return LlamaServerClient(url, sleep=sleeps, rand=lambda: 0.5, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("stream", [False, True])
async def test_5xx_is_retried_until_it_succeeds(stream: bool) -> None:
    sleeps = SleepLog()
    with FakeLlamaServer(script=[HttpFault.server_error(), HttpFault.loading(), "ok"]) as fake:
        client = client_for(fake.base_url, sleeps)
        done = await client.complete(CompletionRequest(prompt="p", stream=stream))
        await client.aclose()
        assert len(fake.completion_bodies) == 3
    assert done.content == "ok"
    assert sleeps.delays == [0.15, 0.3]


@pytest.mark.parametrize("stream", [False, True])
async def test_a_dropped_connection_before_the_answer_is_retried(stream: bool) -> None:
    sleeps = SleepLog()
    with FakeLlamaServer(script=[DropConnection(), "ok"]) as fake:
        client = client_for(fake.base_url, sleeps)
        done = await client.complete(CompletionRequest(prompt="p", stream=stream))
        await client.aclose()
    assert done.content == "ok"
    assert len(sleeps.delays) == 1


async def test_connection_refused_is_retried_then_reported_unavailable() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    sleeps = SleepLog()
    client = client_for(url, sleeps, retries=2)
    with pytest.raises(ProviderUnavailableError):
        await client.complete(CompletionRequest(prompt="p"))
    await client.aclose()
    assert sleeps.delays == [0.15, 0.3]


@pytest.mark.parametrize("fault", [HttpFault.grammar_error(), HttpFault.context_exceeded()])
async def test_4xx_is_not_retried(fault: HttpFault) -> None:
    sleeps = SleepLog()
    with FakeLlamaServer(script=[fault, "never reached"]) as fake:
        client = client_for(fake.base_url, sleeps)
        with pytest.raises(ProviderError) as caught:
            await client.complete(CompletionRequest(prompt="p"))
        await client.aclose()
        assert len(fake.completion_bodies) == 1
    assert caught.value.status == 400
    assert sleeps.delays == []


async def test_retries_stop_at_the_budget() -> None:
    sleeps = SleepLog()
    with FakeLlamaServer(script=[HttpFault.server_error()] * 5) as fake:
        client = client_for(fake.base_url, sleeps, retries=2)
        with pytest.raises(ProviderError) as caught:
            await client.complete(CompletionRequest(prompt="p"))
        await client.aclose()
        assert len(fake.completion_bodies) == 3  # the first try plus two retries
    assert caught.value.status == 500
    assert len(sleeps.delays) == 2


async def test_zero_retries_tries_once() -> None:
    sleeps = SleepLog()
    with FakeLlamaServer(script=[HttpFault.server_error(), "ok"]) as fake:
        client = client_for(fake.base_url, sleeps, retries=0)
        with pytest.raises(ProviderError):
            await client.complete(CompletionRequest(prompt="p"))
        await client.aclose()
    assert sleeps.delays == []


async def test_no_retry_once_the_stream_has_begun() -> None:
    sleeps = SleepLog()
    deltas: list[str] = []
    with FakeLlamaServer(script=[DropConnection(after_chunks=2, content="abcdefghijkl"), "second"]) as fake:
        client = client_for(fake.base_url, sleeps)
        with pytest.raises(ProviderError) as caught:
            await client.complete(CompletionRequest(prompt="p"), deltas.append)
        await client.aclose()
        assert len(fake.completion_bodies) == 1
    assert caught.value.status is None
    assert deltas == ["abcd", "efgh"]  # nothing delivered twice
    assert sleeps.delays == []


@pytest.mark.parametrize(("rand", "factor"), [(0.0, 0.8), (0.5, 1.0), (1.0, 1.2)])
def test_backoff_doubles_from_the_base_within_twenty_percent_jitter(rand: float, factor: float) -> None:
    client = LlamaServerClient("http://127.0.0.1:9", backoff_ms=150, rand=lambda: rand)
    assert [round(client.backoff_delay_s(n), 6) for n in range(3)] == [round(x * factor, 6) for x in (0.15, 0.3, 0.6)]


async def test_jittered_delays_stay_within_bounds() -> None:
    sleeps = SleepLog()
    values = iter([0.0, 0.999, 0.25])
    with FakeLlamaServer(script=[HttpFault.server_error()] * 3 + ["ok"]) as fake:
        client = LlamaServerClient(fake.base_url, backoff_ms=100, sleep=sleeps, rand=lambda: next(values))
        await client.complete(CompletionRequest(prompt="p"))
        await client.aclose()
    for attempt, delay in enumerate(sleeps.delays):
        base = 0.1 * 2**attempt
        assert 0.8 * base <= delay <= 1.2 * base
    assert len(sleeps.delays) == 3


async def test_cancellation_short_circuits_the_retry() -> None:
    async def cancelled(request: httpx.Request) -> httpx.Response:
        raise asyncio.CancelledError

    sleeps = SleepLog()
    client = LlamaServerClient("http://127.0.0.1:9", transport=httpx.MockTransport(cancelled), sleep=sleeps)
    with pytest.raises(asyncio.CancelledError):
        await client.complete(CompletionRequest(prompt="p"))
    await client.aclose()
    assert sleeps.delays == []
