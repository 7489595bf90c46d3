"""Send one HTTP request the guarded way: every hop checked, pinned, capped and retried.

Each hop (the first URL and every redirect) goes through the SSRF guard and connects to
the addresses the guard checked (TLS still verifies the original host name through SNI),
proxy variables are ignored, the body is read up to a byte cap whatever Content-Length
claims, and the retry contract decides what is replayed.
"""

from __future__ import annotations

import asyncio
import ipaddress
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urljoin

import attrs

from .retry_after import parse_retry_after
from .retry_policy import RetryPolicy, may_replay
from .ssrf_guard import CheckedTarget, Resolver, SsrfBlocked, check_url

USER_AGENT = "atomic-agent/0.1"
REDIRECT_STATUS = frozenset({301, 302, 303, 307, 308})
_DROPPED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})

Sleep = Callable[[float], Awaitable[None]]
HostCheck = Callable[[str], None]  # raises SsrfBlocked when a hop's host is not allowed


class HttpFailure(Exception):
    """No usable response: a timeout, a refused connection, too many redirects."""

    def __init__(self, message: str, timed_out: bool = False, attempts: int = 1) -> None:
        super().__init__(message)
        self.timed_out = timed_out
        self.attempts = attempts


@attrs.frozen
class ExchangeOptions:
    private_hosts: tuple[str, ...] = ()
    timeout_s: float = 30.0
    max_bytes: int = 1024 * 1024
    max_redirects: int = 5
    follow: str = "any"  # "any" | "same-host" | "none"
    host_check: HostCheck | None = None
    resolver: Resolver | None = None


@attrs.frozen
class HttpExchange:
    status: int
    reason: str
    headers: tuple[tuple[str, str], ...]
    body: bytes
    truncated: bool
    url: str  # the URL that answered, after redirects
    redirects: tuple[str, ...] = ()
    attempts: int = 1
    waits: tuple[float, ...] = ()

    def header(self, name: str) -> str | None:
        low = name.lower()
        return next((v for k, v in self.headers if k.lower() == low), None)

    @property
    def content_type(self) -> str:
        return (self.header("content-type") or "").split(";", 1)[0].strip().lower()

    def text(self) -> str:
        charset = "utf-8"
        for part in (self.header("content-type") or "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip("\"'")
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


async def _read_capped(response: Any, max_bytes: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            return b"".join(chunks)[:max_bytes], True
    return b"".join(chunks), False


async def _send_pinned(client: Any, method: str, target: CheckedTarget, headers: Mapping[str, str],
                       body: bytes | None, max_bytes: int) -> HttpExchange:
    import httpx

    parts = target.parts
    send_headers = {k: v for k, v in headers.items() if k.lower() not in _DROPPED_HEADERS}
    send_headers.setdefault("User-Agent", USER_AGENT)
    send_headers["Host"] = parts.host_header
    extensions = {"sni_hostname": parts.host} if parts.scheme == "https" and not _is_ip(parts.host) else {}
    last_error: Exception | None = None
    for address in target.addresses:
        request = client.build_request(method, parts.pinned(address), headers=send_headers, content=body,
                                       extensions=extensions)
        try:
            response = await client.send(request, stream=True)
        except httpx.ConnectError as exc:
            last_error = exc  # try the next checked address
            continue
        try:
            if method == "HEAD":
                data, cut = b"", False
            else:
                data, cut = await _read_capped(response, max_bytes)
        finally:
            await response.aclose()
        return HttpExchange(response.status_code, response.reason_phrase, tuple(response.headers.multi_items()),
                            data, cut, f"{parts.scheme}://{parts.host_header}{parts.target}")
    raise HttpFailure(f"could not connect to {parts.host_header} ({last_error})")


def _same_host(a: str, b: str) -> bool:
    from .ssrf_guard import split_url

    try:
        return split_url(a).host == split_url(b).host
    except SsrfBlocked:
        return False


async def _send_following(client: Any, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                          opts: ExchangeOptions, first: CheckedTarget | None) -> HttpExchange:
    hops: list[str] = []
    current = url
    for hop in range(opts.max_redirects + 1):
        # the first hop reuses the caller's check: one lookup decides, a second cannot rebind it
        target = first if hop == 0 and first is not None else await check_url(current, opts.private_hosts,
                                                                                opts.resolver)
        if opts.host_check is not None:
            opts.host_check(target.host)
        exchange = await _send_pinned(client, method, target, headers, body, opts.max_bytes)
        location = exchange.header("location")
        if exchange.status not in REDIRECT_STATUS or not location or opts.follow == "none":
            return attrs.evolve(exchange, redirects=tuple(hops))
        following = urljoin(current, location)
        if opts.follow == "same-host" and not _same_host(current, following):
            return attrs.evolve(exchange, redirects=tuple(hops))
        hops.append(following)
        if exchange.status == 303 or (exchange.status in (301, 302) and method == "POST"):
            method, body = "GET", None
        current = following
    raise HttpFailure(f"more than {opts.max_redirects} redirects (last to {current})")


async def exchange_with_retries(method: str, url: str, headers: Mapping[str, str] | None = None,
                                body: bytes | None = None, opts: ExchangeOptions | None = None,
                                policy: RetryPolicy | None = None, sleep: Sleep = asyncio.sleep,
                                first: CheckedTarget | None = None) -> HttpExchange:
    """One logical request under the retry contract. SsrfBlocked and HttpFailure propagate.

    `first` is the guard's answer for `url` when the caller already checked it (before asking
    for approval); the request then connects to exactly the addresses that were approved.
    """
    import httpx

    opts = opts or ExchangeOptions()
    policy = policy or RetryPolicy()
    method = method.upper()
    waits: list[float] = []
    async with httpx.AsyncClient(trust_env=False, follow_redirects=False,
                                 timeout=httpx.Timeout(opts.timeout_s)) as client:
        for attempt in range(policy.max_retries + 1):
            try:
                exchange = await asyncio.wait_for(
                    _send_following(client, method, url, headers or {}, body, opts, first), opts.timeout_s)
            except (asyncio.TimeoutError, httpx.TimeoutException):
                if attempt < policy.max_retries and may_replay(method, None, True, None):
                    waits.append(policy.backoff(attempt, None))
                    await sleep(waits[-1])
                    continue
                raise HttpFailure(f"{method} {url} timed out after {opts.timeout_s:g}s"
                                  + ("" if may_replay(method, None, True, None) else
                                     f" (not replayed: {method} is not idempotent)"),
                                  timed_out=True, attempts=attempt + 1) from None
            except httpx.HTTPError as exc:
                raise HttpFailure(f"{method} {url} failed: {exc}", attempts=attempt + 1) from None
            retry_after = parse_retry_after(exchange.header("retry-after"))
            if attempt < policy.max_retries and may_replay(method, exchange.status, False, retry_after):
                waits.append(policy.backoff(attempt, retry_after))
                await sleep(waits[-1])
                continue
            return attrs.evolve(exchange, attempts=attempt + 1, waits=tuple(waits))
    raise AssertionError("unreachable: the loop returns or raises")

