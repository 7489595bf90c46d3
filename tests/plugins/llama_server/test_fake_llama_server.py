"""The scripted fake llama-server speaks the real server's shapes and emulates its slot cache."""

from __future__ import annotations

import json

import httpx
import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import (
    DEFAULT_REPLY,
    Delay,
    DropConnection,
    FakeLlamaServer,
    HttpFault,
    Reply,
    fake_tokenize,
)

PREFIX = "<|im_start|>system\n" + "You are a careful operator agent. " * 24  # ~200 tokens


def complete(fake: FakeLlamaServer, **body: object) -> httpx.Response:
    body.setdefault("prompt", PREFIX + "hello")
    return httpx.post(fake.base_url + "/completion", json=body)


def test_health_props_and_slots_have_the_real_shapes() -> None:
    with FakeLlamaServer(n_ctx=2048, total_slots=3, vision=True) as fake:
        assert httpx.get(fake.base_url + "/health").json() == {"status": "ok"}
        props = httpx.get(fake.base_url + "/props").json()
        assert props["default_generation_settings"]["n_ctx"] == 2048
        assert props["total_slots"] == 3
        assert props["modalities"]["vision"] is True
        slots = httpx.get(fake.base_url + "/slots").json()
        assert [s["id"] for s in slots] == [0, 1, 2]
        assert all(s["n_ctx"] == 2048 for s in slots)


def test_loading_answers_503_on_every_endpoint() -> None:
    with FakeLlamaServer() as fake:
        fake.loading = True
        for response in (httpx.get(fake.base_url + "/health"), complete(fake)):
            assert response.status_code == 503
            assert response.json() == {"error": {"code": 503, "message": "Loading model", "type": "unavailable_error"}}


def test_tokenizer_is_four_characters_per_token() -> None:
    with FakeLlamaServer() as fake:
        answer = httpx.post(fake.base_url + "/tokenize", json={"content": "Hello world", "add_special": False}).json()
        assert answer["tokens"] == fake_tokenize("Hello world")
        assert len(answer["tokens"]) == 3
        pieces = httpx.post(fake.base_url + "/tokenize", json={"content": "abcdefg", "with_pieces": True}).json()
        assert [p["piece"] for p in pieces["tokens"]] == ["abcd", "efg"]


def test_same_slot_reuses_the_shared_prefix() -> None:
    with FakeLlamaServer() as fake:
        cold = complete(fake, id_slot=0, prompt=PREFIX + "first question").json()
        warm = complete(fake, id_slot=0, prompt=PREFIX + "second question").json()
        assert cold["timings"]["cache_n"] == 0
        assert warm["timings"]["cache_n"] == len(PREFIX) // 4
        assert warm["timings"]["prompt_n"] == warm["tokens_evaluated"] - warm["timings"]["cache_n"]


def test_identical_prompt_still_evaluates_its_last_token() -> None:
    with FakeLlamaServer() as fake:
        complete(fake, id_slot=1, prompt=PREFIX)
        again = complete(fake, id_slot=1, prompt=PREFIX).json()
        assert again["timings"]["prompt_n"] == 1


def test_prefix_live_in_another_slot_is_not_reused() -> None:
    with FakeLlamaServer() as fake:
        complete(fake, id_slot=0)
        other = complete(fake, id_slot=1).json()
        assert other["id_slot"] == 1
        assert other["timings"]["cache_n"] == 0


def test_cache_prompt_false_reuses_nothing() -> None:
    with FakeLlamaServer() as fake:
        complete(fake, id_slot=0)
        assert complete(fake, id_slot=0, cache_prompt=False).json()["timings"]["cache_n"] == 0


def test_out_of_range_slot_wraps_modulo_total_slots() -> None:
    with FakeLlamaServer(total_slots=2) as fake:
        assert complete(fake, id_slot=7).json()["id_slot"] == 1


def test_minus_one_picks_the_slot_holding_the_longest_prefix() -> None:
    with FakeLlamaServer(total_slots=2) as fake:
        complete(fake, id_slot=1, prompt=PREFIX + "a")
        picked = complete(fake, id_slot=-1, prompt=PREFIX + "b").json()
        assert picked["id_slot"] == 1
        assert picked["timings"]["cache_n"] > 0


def test_script_plays_in_order_then_answers_the_default() -> None:
    with FakeLlamaServer(script=["one", Reply("two")]) as fake:
        assert [complete(fake).json()["content"] for _ in range(3)] == ["one", "two", DEFAULT_REPLY]
        assert fake.remaining == 0


def test_faults_use_the_error_envelope() -> None:
    script = [HttpFault.grammar_error(), HttpFault.context_exceeded(5001, 4096), HttpFault.server_error()]
    with FakeLlamaServer(script=script) as fake:
        grammar, overflow, server = (complete(fake) for _ in range(3))
        assert grammar.status_code == 400 and grammar.json()["error"]["type"] == "invalid_request_error"
        assert overflow.json()["error"] == {
            "code": 400, "type": "exceed_context_size_error", "n_prompt_tokens": 5001, "n_ctx": 4096,
            "message": "request (5001 tokens) exceeds the available context size (4096 tokens), try increasing it"}
        assert server.status_code == 500 and server.json()["error"]["type"] == "server_error"


def test_prompt_longer_than_the_slot_context_is_refused() -> None:
    with FakeLlamaServer(n_ctx=64) as fake:
        response = complete(fake, prompt="x" * 400)
        assert response.status_code == 400
        assert response.json()["error"]["n_prompt_tokens"] == 100


def test_n_predict_and_scripted_limit_report_limit_stop_type() -> None:
    with FakeLlamaServer(script=["abcdefghijkl", Reply("abc", stop_type="limit", truncated=True)]) as fake:
        capped = complete(fake, n_predict=2).json()
        assert (capped["content"], capped["stop_type"], capped["tokens_predicted"]) == ("abcdefgh", "limit", 2)
        scripted = complete(fake).json()
        assert (scripted["stop_type"], scripted["truncated"]) == ("limit", True)


def test_stop_word_cuts_the_content() -> None:
    with FakeLlamaServer(script=["answer END trailing"]) as fake:
        result = complete(fake, stop=[" END"]).json()
        assert (result["content"], result["stop_type"], result["stopping_word"]) == ("answer", "word", " END")


def test_stream_sends_chunks_then_a_stop_chunk_and_no_done() -> None:
    with FakeLlamaServer(script=["abcdefgh"]) as fake:
        with httpx.stream("POST", fake.base_url + "/completion",
                          json={"prompt": "hi", "stream": True, "id_slot": 1}) as response:
            assert response.headers["content-type"] == "text/event-stream"
            text = response.read().decode()
    assert "[DONE]" not in text
    events = [json.loads(block.removeprefix("data: ")) for block in text.split("\n\n") if block]
    assert [e["content"] for e in events] == ["abcd", "efgh", ""]
    assert [e["id_slot"] for e in events] == [-1, -1, 1]
    assert events[-1]["stop"] is True and "timings" in events[-1]


def test_drop_mid_stream_breaks_the_connection() -> None:
    with FakeLlamaServer(script=[DropConnection(after_chunks=1, content="abcdefgh")]) as fake:
        with pytest.raises(httpx.RemoteProtocolError):
            with httpx.stream("POST", fake.base_url + "/completion", json={"prompt": "hi", "stream": True}) as r:
                r.read()


def test_drop_before_response_sends_nothing() -> None:
    with FakeLlamaServer(script=[DropConnection()]) as fake:
        with pytest.raises(httpx.RemoteProtocolError):
            complete(fake)


def test_delay_then_answers_its_item() -> None:
    with FakeLlamaServer(script=[Delay(0.01, then="late")]) as fake:
        assert complete(fake).json()["content"] == "late"


def test_every_request_body_is_recorded() -> None:
    with FakeLlamaServer() as fake:
        complete(fake, grammar="root ::= \"x\"", id_slot=0, cache_prompt=True)
        httpx.get(fake.base_url + "/props")
        assert [(r.method, r.path) for r in fake.requests] == [("POST", "/completion"), ("GET", "/props")]
        assert fake.completion_bodies[0]["grammar"] == "root ::= \"x\""
        assert fake.completion_bodies[0]["id_slot"] == 0


async def test_usable_from_async_tests() -> None:
    with FakeLlamaServer(script=["async ok"]) as fake:
        async with httpx.AsyncClient(base_url=fake.base_url) as client:
            response = await client.post("/completion", json={"prompt": "hi"})
        assert response.json()["content"] == "async ok"
