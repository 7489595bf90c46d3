"""LlamaServerClient.complete against the fake: request body, JSON and SSE answers, timings."""

from __future__ import annotations

import httpx
import pytest

from atomic_agent.api import CompletionRequest, ProviderError
from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient
from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer, Reply

PREFIX = "<|im_start|>system\n" + "Answer with one JSON array of tool calls. " * 20


async def test_non_stream_completion_maps_the_result_fields() -> None:
    with FakeLlamaServer(script=['[{"tool":"reply"}]']) as fake:
        client = LlamaServerClient(fake.base_url)
        done = await client.complete(CompletionRequest(prompt="hi there", slot_id=1, stream=False))
        await client.aclose()
    assert done.content == '[{"tool":"reply"}]'
    assert (done.stop, done.stop_type, done.truncated, done.slot_id) == (True, "eos", False, 1)
    assert done.tokens_evaluated == 2 and done.tokens_predicted == 5
    assert done.raw["timings"]["prompt_n"] == done.prompt_n


async def test_stream_calls_on_delta_per_chunk_and_ends_on_the_stop_chunk() -> None:
    deltas: list[str] = []
    with FakeLlamaServer(script=["abcdefghij"]) as fake:
        client = LlamaServerClient(fake.base_url)
        done = await client.complete(CompletionRequest(prompt="hi", slot_id=0), deltas.append)
        await client.aclose()
    assert deltas == ["abcd", "efgh", "ij"]
    assert done.content == "abcdefghij"
    assert done.slot_id == 0  # from the final chunk; intermediate chunks say -1


async def test_body_carries_id_slot_and_never_slot_id() -> None:
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        await client.complete(CompletionRequest(prompt="p", slot_id=1, extra={"slot_id": 0, "n_probs": 2}))
        await client.aclose()
        body = fake.completion_bodies[0]
    assert body["id_slot"] == 1
    assert "slot_id" not in body
    assert body["n_probs"] == 2


async def test_grammar_omitted_when_none_seed_and_stop_sent_only_when_set() -> None:
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        await client.complete(CompletionRequest(prompt="p"))
        await client.complete(CompletionRequest(prompt="p", grammar='root ::= "x"', seed=42, stop=("###",),
                                                cache_prompt=False, temperature=0.0, n_predict=8, stream=False))
        await client.aclose()
        plain, full = fake.completion_bodies
    assert {"grammar", "seed", "stop"}.isdisjoint(plain)
    assert plain["cache_prompt"] is True and plain["stream"] is True
    assert full == {"prompt": "p", "n_predict": 8, "id_slot": -1, "cache_prompt": False, "temperature": 0.0,
                    "stream": False, "grammar": 'root ::= "x"', "seed": 42, "stop": ["###"]}


async def test_cache_n_and_prompt_n_come_from_timings_not_tokens_cached() -> None:
    with FakeLlamaServer() as fake:
        client = LlamaServerClient(fake.base_url)
        cold = await client.complete(CompletionRequest(prompt=PREFIX + "one", slot_id=0))
        warm = await client.complete(CompletionRequest(prompt=PREFIX + "two", slot_id=0))
        await client.aclose()
    assert cold.cache_n == 0 and cold.prompt_n == cold.tokens_evaluated
    assert warm.cache_n == warm.raw["timings"]["cache_n"] > 0
    assert warm.cache_n != warm.raw["tokens_cached"]
    assert warm.prompt_n == warm.tokens_evaluated - warm.cache_n


async def test_limit_truncation_is_reported() -> None:
    with FakeLlamaServer(script=[Reply("cut off", stop_type="limit", truncated=True)]) as fake:
        client = LlamaServerClient(fake.base_url)
        done = await client.complete(CompletionRequest(prompt="p"))
        await client.aclose()
    assert (done.stop_type, done.truncated) == ("limit", True)


def sse_transport(text: str) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=text.encode()))


async def test_sse_parser_skips_comments_and_a_stray_done() -> None:
    text = (": keep-alive\n\n"
            'data: {"content":"a","stop":false,"id_slot":-1}\n\n'
            'data: {"content":"b","stop":false,\ndata: "id_slot":-1}\n\n'
            'data: {"content":"","stop":true,"id_slot":0,"stop_type":"eos","timings":{"cache_n":3,"prompt_n":2}}\n\n'
            "data: [DONE]\n\n")
    client = LlamaServerClient("http://127.0.0.1:9", transport=sse_transport(text))
    deltas: list[str] = []
    done = await client.complete(CompletionRequest(prompt="p"), deltas.append)
    await client.aclose()
    assert deltas == ["a", "b"]
    assert (done.content, done.cache_n, done.prompt_n, done.slot_id) == ("ab", 3, 2, 0)


async def test_stream_that_ends_without_a_stop_chunk_is_an_error() -> None:
    client = LlamaServerClient("http://127.0.0.1:9", transport=sse_transport('data: {"content":"a","stop":false}\n\n'))
    with pytest.raises(ProviderError, match="without its final") as caught:
        await client.complete(CompletionRequest(prompt="p"))
    await client.aclose()
    assert caught.value.status is None


async def test_error_event_inside_the_stream_becomes_provider_error() -> None:
    text = 'data: {"error":{"code":500,"message":"boom","type":"server_error"}}\n\n'
    sleeps: list[float] = []

    async def record(seconds: float) -> None:
        sleeps.append(seconds)

    client = LlamaServerClient("http://127.0.0.1:9", transport=sse_transport(text), sleep=record)
    with pytest.raises(ProviderError) as caught:
        await client.complete(CompletionRequest(prompt="p"))
    await client.aclose()
    assert (caught.value.status, caught.value.error_type) == (500, "server_error")
    assert sleeps == []  # the body had started: never retried
