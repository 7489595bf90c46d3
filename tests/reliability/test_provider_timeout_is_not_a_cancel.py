"""a slow model server read as a user cancel and the message was dropped.

httpx implements its timeouts by cancelling an anyio scope, so every timeout it raises
carries a `CancelledError` in its exception chain; the classifier walked the chain and
called it a cancel (`run` exited 130, no note, nothing for a restart). Here every timeout
httpx can raise — connect, read, write, pool, and a stream that stalls mid-answer — is
produced for real on loopback sockets (and each class once more through a transport that
raises it), and none may classify as a cancel.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from atomic_agent.llm.provider_protocol import CompletionRequest, ProviderError
from atomic_agent.plugins.llama_server.llama_client import LlamaServerClient
from atomic_agent.plugins.llama_server.llama_provider import LlamaServerProvider
from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer, Stall
from atomic_agent.plugins.openai_compatible.http_errors import network_error as openai_network_error
from atomic_agent.reliability.failure_taxonomy import classify_failure
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, USER
from atomic_agent.turns.restart_recovery import owes_answer
from tests.agent.loop_harness import make_runtime, until

TIMEOUT_S = 0.3
URL_PATH = "/completion"


def chain_names(err: BaseException) -> list[str]:
    names, seen, current = [], [], err
    while current is not None and all(current is not s for s in seen):
        seen.append(current)
        names.append(type(current).__name__)
        current = current.__cause__ or current.__context__
    return names


@pytest.fixture
def silent_server() -> Iterator[tuple[int, list[socket.socket]]]:
    """Accepts connections and reads nothing, answers nothing."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            accepted.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    server.close()


def assert_timeout_not_cancel(err: BaseException, expected_category: str = "provider_timeout") -> None:
    failure = classify_failure(err)
    assert failure.category == expected_category, (failure, chain_names(err))
    assert failure.category != "cancelled"


async def _complete(client: LlamaServerClient, *, stream: bool, prompt: str = "p") -> ProviderError:
    with pytest.raises(ProviderError) as caught:
        await client.complete(CompletionRequest(prompt=prompt, stream=stream, n_predict=8), None)
    return caught.value


@pytest.mark.parametrize("stream", [False, True])
async def test_read_timeout_is_provider_timeout_not_cancel(silent_server, stream: bool) -> None:
    port, _ = silent_server
    client = LlamaServerClient(f"http://127.0.0.1:{port}", retries=3, backoff_ms=0, timeout_s=TIMEOUT_S)
    try:
        err = await _complete(client, stream=stream)
    finally:
        await client.aclose()
    assert "CancelledError" in chain_names(err)  # the chain that fooled the old classifier
    assert err.timed_out and "ReadTimeout" in chain_names(err)
    assert_timeout_not_cancel(err)


async def test_read_timeout_is_not_replayed(silent_server) -> None:
    """Our own timeout burns a full timeout per try: the transport retry does not repeat it."""
    port, accepted = silent_server
    client = LlamaServerClient(f"http://127.0.0.1:{port}", retries=3, backoff_ms=0, timeout_s=TIMEOUT_S)
    try:
        await _complete(client, stream=False)
    finally:
        await client.aclose()
    assert len(accepted) == 1


async def test_write_timeout_is_provider_timeout_not_cancel(silent_server) -> None:
    port, _ = silent_server
    client = LlamaServerClient(f"http://127.0.0.1:{port}", retries=0, timeout_s=TIMEOUT_S)
    try:  # a body far larger than the socket buffers, to a server that never reads it
        err = await _complete(client, stream=False, prompt="x" * (64 * 1024 * 1024))
    finally:
        await client.aclose()
    assert "WriteTimeout" in chain_names(err), chain_names(err)
    assert_timeout_not_cancel(err)


async def test_pool_timeout_is_provider_timeout_not_cancel(silent_server) -> None:
    port, accepted = silent_server
    transport = httpx.AsyncHTTPTransport(limits=httpx.Limits(max_connections=1))
    client = LlamaServerClient(f"http://127.0.0.1:{port}", retries=0, timeout_s=1.5, transport=transport)
    try:
        first = asyncio.ensure_future(_complete(client, stream=False))
        await until(lambda: len(accepted) == 1)  # the only pooled connection is taken by a request nobody answers
        client._http.timeout = httpx.Timeout(1.5, pool=TIMEOUT_S)
        err = await _complete(client, stream=False)
        await first
    finally:
        await client.aclose()
    assert "PoolTimeout" in chain_names(err), chain_names(err)
    assert_timeout_not_cancel(err)


async def test_connect_timeout_is_unreachable_transport_not_cancel() -> None:
    """A listener whose accept queue is full drops new SYNs: connecting times out."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(0)
    port = server.getsockname()[1]
    fillers = []
    for _ in range(8):  # fill the accept queue (never accepted)
        filler = socket.socket()
        filler.setblocking(False)
        try:
            filler.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fillers.append(filler)
    client = LlamaServerClient(f"http://127.0.0.1:{port}", retries=0, timeout_s=TIMEOUT_S)
    try:
        err = await _complete(client, stream=False)
    finally:
        await client.aclose()
        for filler in fillers:
            filler.close()
        server.close()
    names = chain_names(err)
    if "ConnectTimeout" not in names:  # this kernel accepted the handshake anyway: then it is a read timeout
        assert "ReadTimeout" in names, names
        assert_timeout_not_cancel(err)
        return
    assert_timeout_not_cancel(err, "transport")


async def test_stream_that_stalls_mid_answer_is_provider_timeout_not_cancel() -> None:
    with FakeLlamaServer(script=[Stall(after_chunks=2, seconds=2 * TIMEOUT_S + 1)]) as fake:
        client = LlamaServerClient(fake.base_url, retries=3, timeout_s=TIMEOUT_S)
        seen: list[str] = []
        try:
            with pytest.raises(ProviderError) as caught:
                await client.complete(CompletionRequest(prompt="p", stream=True, n_predict=64), seen.append)
        finally:
            await client.aclose()
    err = caught.value
    assert len(seen) == 2 and "stalled after 2 chunks" in str(err)
    assert "CancelledError" in chain_names(err)
    assert_timeout_not_cancel(err)
    assert len(fake.completion_bodies) == 1  # never replayed once streaming began


TIMEOUT_CLASSES = [httpx.ConnectTimeout, httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout]


@pytest.mark.parametrize("cls", TIMEOUT_CLASSES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("stream", [False, True])
async def test_every_httpx_timeout_class_through_the_llama_client(cls: type[httpx.TimeoutException],
                                                                  stream: bool) -> None:
    def raise_it(request: httpx.Request) -> httpx.Response:
        try:
            raise asyncio.CancelledError()  # what anyio leaves in the context of a real timeout
        except asyncio.CancelledError:
            raise cls("timed out", request=request) from None

    client = LlamaServerClient("http://127.0.0.1:9", retries=2, backoff_ms=0, timeout_s=TIMEOUT_S,
                               transport=httpx.MockTransport(raise_it))
    try:
        err = await _complete(client, stream=stream)
    finally:
        await client.aclose()
    expected = "transport" if cls is httpx.ConnectTimeout else "provider_timeout"
    assert_timeout_not_cancel(err, expected)


@pytest.mark.parametrize("cls", TIMEOUT_CLASSES, ids=lambda c: c.__name__)
def test_every_httpx_timeout_class_through_the_openai_compatible_provider(cls: type[httpx.TimeoutException]) -> None:
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    err = openai_network_error(cls("timed out", request=request), str(request.url), "cloud")
    expected = "transport" if cls is httpx.ConnectTimeout else "provider_timeout"
    assert_timeout_not_cancel(err, expected)


@pytest.mark.parametrize("cls", TIMEOUT_CLASSES, ids=lambda c: c.__name__)
def test_an_unwrapped_httpx_timeout_is_never_a_cancel(cls: type[httpx.TimeoutException]) -> None:
    try:
        try:
            raise asyncio.CancelledError()
        except asyncio.CancelledError:
            raise cls("timed out")  # noqa: B904 - the implicit context is what anyio leaves
    except httpx.TimeoutException as exc:
        expected = "transport" if cls is httpx.ConnectTimeout else "provider_timeout"
        assert_timeout_not_cancel(exc, expected)


@pytest.mark.parametrize("item", [Delay(3.0), Stall(after_chunks=3, seconds=3.0)], ids=["slow", "stall"])
async def test_a_slow_server_fails_the_turn_with_a_note_and_keeps_the_message(tmp_path: Path, item: object) -> None:
    with FakeLlamaServer(script=[item]) as fake:
        provider = LlamaServerProvider(fake.base_url, "external", retries=3, backoff_ms=0, timeout_s=1.0)
        runtime = make_runtime(tmp_path, provider)  # type: ignore[arg-type]
        try:
            result = await runtime.run_turn("what is the weather?")
            entries = runtime.sessions.entries(result.session_id)
            owed = owes_answer(runtime.sessions, result.session_id)
            turn = runtime.lifecycle.ledger.get(result.turn_id)
        finally:
            await runtime.close()
            await provider.close()
    assert (result.status, result.category) == ("failed", "provider_timeout"), result
    assert turn is not None and turn.state == "failed" and turn.category == "provider_timeout"
    assert [e.text for e in entries if e.kind == USER] == ["what is the weather?"]  # kept for the re-send
    notes = [e.text for e in entries if e.kind == FAILURE_NOTE]
    assert len(notes) == 1 and "too slow" in notes[0]
    assert owed  # a restart (or the next message) answers it: a cancel would have closed the question
