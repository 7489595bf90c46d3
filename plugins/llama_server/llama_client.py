"""Async HTTP client for llama-server's native endpoints: /completion, /props, /tokenize, /slots.

Only imported when a llama-server provider is built, so httpx sits at the top level here.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import attrs
import httpx

from atomic_agent.api import Completion, CompletionRequest, ProviderError, ProviderUnavailableError

from .reclaiming_transport import ReclaimingTransport

T = TypeVar("T")
DeltaCallback = Callable[[str], None]
SleepFn = Callable[[float], Awaitable[None]]

JITTER = 0.2  # ±20 % around each exponential backoff step


@attrs.frozen
class ServerProps:
    """The facts `/props` reports. `n_ctx` is per slot (`-c` divided by `--parallel`)."""

    n_ctx: int | None
    total_slots: int
    modalities: dict[str, bool]
    chat_template: str
    model_alias: str
    model_path: str
    raw: dict[str, Any] = attrs.field(factory=dict, repr=False, eq=False)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ServerProps:
        settings = data.get("default_generation_settings")
        n_ctx = settings.get("n_ctx") if isinstance(settings, dict) else None
        if not isinstance(n_ctx, int):
            n_ctx = data.get("n_ctx")  # older servers report it at the root
        modalities = data.get("modalities")
        return cls(
            n_ctx=n_ctx if isinstance(n_ctx, int) and n_ctx > 0 else None,
            total_slots=max(int(data.get("total_slots") or 1), 1),
            modalities={str(k): bool(v) for k, v in modalities.items()} if isinstance(modalities, dict) else {},
            chat_template=str(data.get("chat_template") or ""),
            model_alias=str(data.get("model_alias") or ""),
            model_path=str(data.get("model_path") or ""),
            raw=data,
        )


def completion_body(request: CompletionRequest) -> dict[str, Any]:
    """The /completion JSON for `request`. The slot goes out as `id_slot`: `slot_id` is ignored
    by the server, which would silently drop the session's KV-cache affinity."""
    body: dict[str, Any] = {k: v for k, v in request.extra.items() if k != "slot_id"}
    body.update(prompt=request.prompt, n_predict=request.n_predict, id_slot=request.slot_id,
                cache_prompt=request.cache_prompt, temperature=request.temperature, stream=request.stream)
    if request.grammar is not None:
        body["grammar"] = request.grammar
    if request.seed is not None:
        body["seed"] = request.seed
    if request.stop:
        body["stop"] = list(request.stop)
    return body


def completion_from_result(result: dict[str, Any], content: str, duration_ms: float) -> Completion:
    """Map the final /completion object (or final stream chunk) onto a `Completion`.

    Reuse is `timings.cache_n`; `tokens_cached` counts what the slot holds afterwards, not reuse.
    """
    timings = raw_timings if isinstance(raw_timings := result.get("timings"), dict) else {}
    return Completion(
        content=content,
        stop=bool(result.get("stop", True)),
        stop_type=str(result.get("stop_type") or "none"),
        truncated=bool(result.get("truncated", False)),
        tokens_predicted=int(result.get("tokens_predicted") or 0),
        tokens_evaluated=int(result.get("tokens_evaluated") or 0),
        cache_n=int(timings.get("cache_n") or 0),
        prompt_n=int(timings.get("prompt_n") or 0),
        slot_id=int(result.get("id_slot", -1)),
        reasoning_content=str(result.get("reasoning_content") or ""),
        duration_ms=duration_ms,
        raw=result,
    )


def error_from_body(status: int, url: str, text: str) -> ProviderError:
    """Turn an error answer into a `ProviderError`, keeping the whole parsed body (for a context
    overflow it carries `error.n_prompt_tokens` and `error.n_ctx`)."""
    try:
        body: object = json.loads(text)
    except ValueError:
        body = text
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        error_type = str(error.get("type")) if error.get("type") is not None else None
        detail = str(error.get("message") or "").strip() or "no message"
    else:
        error_type, detail = None, (text.strip()[:300] or "empty body")
    kind = f" ({error_type})" if error_type else ""
    message = f"llama-server at {url} answered HTTP {status}{kind}: {detail}"
    # 503 is "Loading model" / unavailable: the backend is not usable yet, same as unreachable
    cls = ProviderUnavailableError if status == 503 else ProviderError
    return cls(message, status=status, url=url, body=body, error_type=error_type)


def network_error(exc: httpx.TransportError, url: str, timeout_s: float | None = None) -> ProviderError:
    """A failure with no HTTP status. Not connecting at all means the backend is unavailable;
    a read, write or pool timeout means it was reached and our client stopped waiting
    (`timed_out`: classified provider_timeout, never a cancel)."""
    reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return ProviderUnavailableError(f"cannot reach llama-server at {url} ({reason})", status=None, url=url)
    if isinstance(exc, httpx.TimeoutException):
        limit = f" within llama.requestTimeoutS={timeout_s:g} s" if timeout_s else " in time"
        return ProviderError(f"llama-server at {url} did not answer{limit} ({type(exc).__name__})", status=None,
                             url=url, timed_out=True)
    return ProviderError(f"request to llama-server at {url} failed ({reason})", status=None, url=url)


def is_retryable(exc: BaseException) -> bool:
    """Network failures (status None) and 5xx may succeed on a second try; a 4xx (bad
    grammar, context overflow) would fail the same way again, and our own timeout is not
    repeated: the server was reached and was too slow, so another try burns a second full
    timeout of GPU time. Anything that is not a `ProviderError` is never retried."""
    if not isinstance(exc, ProviderError) or exc.timed_out:
        return False
    return exc.status is None or exc.status >= 500


async def sse_events(lines: AsyncIterator[str]) -> AsyncIterator[dict[str, Any]]:
    """Yield each Server-Sent Event's JSON payload. /completion sends no `[DONE]`; the caller
    stops on the chunk with `"stop": true`. A `[DONE]`, if some build sends one, is skipped."""
    data: list[str] = []
    is_error = False

    def parse() -> dict[str, Any] | None:
        text = "\n".join(data)
        if text.strip() == "[DONE]":
            return None
        payload = json.loads(text)
        if not isinstance(payload, dict):
            raise ValueError(f"expected a JSON object in the event stream, got {text[:120]!r}")
        return {"error": payload} if is_error and "error" not in payload else payload

    async for line in lines:
        if line == "":
            if data:
                event = parse()
                data, is_error = [], False
                if event is not None:
                    yield event
            continue
        if line.startswith(":"):
            continue  # SSE comment / keep-alive
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name in ("data", "error"):
            is_error = is_error or name == "error"
            data.append(value)
    if data:
        event = parse()
        if event is not None:
            yield event


def server_transport(base_url: str) -> httpx.AsyncHTTPTransport:
    """httpx's pooled transport for a llama-server at `base_url`.

    A plain-http server is never spoken to over TLS (requests are paths under its URL and
    redirects are not followed), so its transport gets a TLS context that trusts nothing
    instead of one loading the system CA bundle, which costs 15-70 ms on every start. Were
    a TLS connection ever attempted, that context would refuse it, never accept it."""
    if base_url.startswith("http://"):
        import ssl

        return httpx.AsyncHTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    return httpx.AsyncHTTPTransport()


class LlamaServerClient:
    """Talks to one llama-server. `retries` bounds the transport retry of completions and
    /props: exponential from `backoff_ms` with ±20 % jitter, only on network errors and 5xx.
    `sleep` and `rand` are injectable so tests can observe the backoff without waiting."""

    def __init__(self, base_url: str, *, retries: int = 3, backoff_ms: int = 150, timeout_s: float = 120,
                 transport: httpx.AsyncBaseTransport | None = None, sleep: SleepFn | None = None,
                 rand: Callable[[], float] | None = None) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"llama-server URL {base_url!r} must start with http:// or https:// "
                             "(for example http://127.0.0.1:8080)")
        if retries < 0 or backoff_ms < 0 or timeout_s <= 0:
            raise ValueError(f"invalid llama-server client settings: retries={retries}, backoff_ms={backoff_ms}, "
                             f"timeout_s={timeout_s} (retries and backoff must be >= 0, the timeout > 0)")
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.retries = retries
        self.backoff_ms = backoff_ms
        self._sleep: SleepFn = sleep or asyncio.sleep
        self._rand: Callable[[], float] = rand or random.random
        # cancelled calls are routine (an aborted reflection, a timed-out call): see reclaiming_transport
        self.transport = ReclaimingTransport(transport or server_transport(self.base_url))
        self._http = httpx.AsyncClient(base_url=self.base_url, timeout=httpx.Timeout(timeout_s),
                                       transport=self.transport)

    def backoff_delay_s(self, attempt: int) -> float:
        """Seconds to wait before retry number `attempt` (0-based)."""
        return self.backoff_ms / 1000 * (2**attempt) * (1 + JITTER * (2 * self._rand() - 1))

    async def _with_retry(self, action: Callable[[], Awaitable[T]]) -> T:
        attempt = 0
        while True:
            try:
                return await action()
            except ProviderError as exc:  # cancellation is a BaseException and never lands here
                if attempt >= self.retries or not is_retryable(exc):
                    raise
            await self._sleep(self.backoff_delay_s(attempt))
            attempt += 1

    async def _request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = self.base_url + path
        try:
            response = await self._http.request(method, path, json=body)
        except httpx.TransportError as exc:
            raise network_error(exc, url, self.timeout_s) from exc
        if response.status_code >= 400:
            raise error_from_body(response.status_code, url, response.text)
        try:
            return response.json()
        except ValueError as exc:
            raise ProviderError(f"llama-server at {url} sent invalid JSON: {response.text[:200]!r}",
                                status=response.status_code, url=url, body=response.text) from exc

    async def health(self) -> bool:
        """True once the model is loaded (200); False while loading (503) or unreachable."""
        try:
            response = await self._http.get("/health")
        except httpx.TransportError:
            return False
        return response.status_code == 200

    async def props(self) -> ServerProps:
        data = await self._with_retry(lambda: self._request("GET", "/props"))
        if not isinstance(data, dict):
            raise ProviderError(f"llama-server /props answered {type(data).__name__}, expected an object",
                                status=200, url=self.base_url + "/props", body=data)
        return ServerProps.from_json(data)

    async def model_meta(self) -> dict[str, Any]:
        """The first model's `meta` from the OpenAI-style /v1/models (n_params, n_ctx_train, size
        ...); {} when the server lists no model or no meta. One try: an older server without the
        route answers 404, which is a ProviderError like any other failure."""
        data = await self._request("GET", "/v1/models")
        models = data.get("data") if isinstance(data, dict) else None
        first = models[0] if isinstance(models, list) and models and isinstance(models[0], dict) else {}
        meta = first.get("meta")
        return dict(meta) if isinstance(meta, dict) else {}

    async def slots(self) -> list[dict[str, Any]]:
        data = await self._request("GET", "/slots")
        return [slot for slot in data if isinstance(slot, dict)] if isinstance(data, list) else []

    async def tokenize(self, text: str) -> list[int]:
        data = await self._request("POST", "/tokenize", {"content": text, "add_special": False})
        tokens = data.get("tokens") if isinstance(data, dict) else None
        if not isinstance(tokens, list):
            raise ProviderError("llama-server /tokenize answered without a `tokens` list",
                                status=200, url=self.base_url + "/tokenize", body=data)
        return [int(t["id"]) if isinstance(t, dict) else int(t) for t in tokens]

    async def complete(self, request: CompletionRequest, on_delta: DeltaCallback | None = None) -> Completion:
        """Run one /completion. Streaming calls `on_delta` per content chunk; only opening the
        stream is retried, because once tokens flow the server's slot state is indeterminate."""
        started = time.monotonic()
        body = completion_body(request)
        if not request.stream:
            result = await self._with_retry(lambda: self._request("POST", "/completion", body))
            if not isinstance(result, dict):
                raise ProviderError("llama-server /completion answered with a non-object",
                                    status=200, url=self.base_url + "/completion", body=result)
            content = str(result.get("content") or "")
            return completion_from_result(result, content, (time.monotonic() - started) * 1000)
        response = await self._with_retry(lambda: self._open_stream(body))
        content, final = await self._read_stream(response, on_delta)
        return completion_from_result(final, content, (time.monotonic() - started) * 1000)

    async def _open_stream(self, body: dict[str, Any]) -> httpx.Response:
        url = self.base_url + "/completion"
        try:
            response = await self._http.send(self._http.build_request("POST", "/completion", json=body), stream=True)
        except httpx.TransportError as exc:
            raise network_error(exc, url, self.timeout_s) from exc
        if response.status_code >= 400:
            try:
                text = (await response.aread()).decode("utf-8", "replace")
            except httpx.TransportError:
                text = ""
            finally:
                await response.aclose()
            raise error_from_body(response.status_code, url, text)
        return response

    async def _read_stream(self, response: httpx.Response,
                           on_delta: DeltaCallback | None) -> tuple[str, dict[str, Any]]:
        url = self.base_url + "/completion"
        parts: list[str] = []
        try:
            async for event in sse_events(response.aiter_lines()):
                if "error" in event:  # a failure after the headers went out arrives as an event
                    error = event["error"]
                    code = error.get("code") if isinstance(error, dict) else None
                    raise error_from_body(code if isinstance(code, int) else 500, url, json.dumps(event))
                piece = event.get("content")
                if isinstance(piece, str) and piece:
                    parts.append(piece)
                    if on_delta is not None:
                        on_delta(piece)
                if event.get("stop") is True:
                    return "".join(parts), event
        except httpx.TimeoutException as exc:
            raise ProviderError(f"llama-server stream from {url} stalled after {len(parts)} chunks: nothing arrived "
                                f"within llama.requestTimeoutS={self.timeout_s:g} s ({type(exc).__name__}); not "
                                "retried once streaming began", status=None, url=url, timed_out=True) from exc
        except httpx.TransportError as exc:
            raise ProviderError(f"llama-server stream from {url} broke after {len(parts)} chunks "
                                f"({type(exc).__name__}); not retried once streaming began",
                                status=None, url=url) from exc
        except ValueError as exc:
            raise ProviderError(f"llama-server stream from {url} sent a malformed event: {exc}",
                                status=200, url=url) from exc
        finally:
            await response.aclose()
        raise ProviderError(f"llama-server stream from {url} ended after {len(parts)} chunks without its final "
                            "`stop: true` chunk", status=None, url=url)

    async def aclose(self) -> None:
        await self._http.aclose()
