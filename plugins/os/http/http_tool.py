"""`os.http.request`: one HTTP request, allowlisted, gated, SSRF-guarded and retried.

The spec is built from this module's constants at start-up; the SSRF guard, the egress
policy and the exchange are imported by the functions that run a request.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

from .http_config import HttpConfig, http_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

    from .guarded_exchange import HttpExchange, Sleep
    from .retry_policy import RetryPolicy
    from .ssrf_guard import Resolver

TOOL_NAME = "os.http.request"
CATEGORY = "http"
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
BODY_SHOWN = 800
_TEXTUAL = ("text/", "application/json", "application/xml", "application/javascript", "application/x-www-form",
            "+json", "+xml")

ARGS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "method": {"type": "string", "enum": list(METHODS)},
        "url": {"type": "string", "description": "http(s) URL"},
        "headers": {"type": "object", "additionalProperties": {"type": "string"}},
        "body": {"type": "string", "description": "request body (send JSON as a string with a Content-Type header)"},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": 600},
    },
    "required": ["method", "url"],
    "additionalProperties": False,
}
EXAMPLE = '{"tool": "os.http.request", "args": {"method": "GET", "url": "https://api.github.com/zen"}}'


def is_textual(content_type: str) -> bool:
    return not content_type or any(marker in content_type for marker in _TEXTUAL)


def retry_policy(max_retries: int, base_ms: int, max_ms: int) -> RetryPolicy:
    from .retry_policy import RetryPolicy

    return RetryPolicy(max_retries, base_ms / 1000, max_ms / 1000)


def _summary(method: str, exchange: HttpExchange) -> str:
    from ..shell.shown_text import escape_for_prompt, excerpt, fenced

    lines = [f"{method} {exchange.url} → HTTP {exchange.status} {exchange.reason}".rstrip()]
    meta = [exchange.content_type or "no content type", f"{len(exchange.body)} bytes"]
    if exchange.truncated:
        meta.append("body cut at the size cap")
    if exchange.attempts > 1:
        meta.append(f"{exchange.attempts} attempts")
    if exchange.redirects:
        meta.append(f"{len(exchange.redirects)} redirects")
    lines.append(" · ".join(meta))
    location = exchange.header("location")
    if location and 300 <= exchange.status < 400:
        lines.append(f"Location: {escape_for_prompt(location, 300)} (not followed)")
    if exchange.body:
        if is_textual(exchange.content_type):
            lines.append(fenced(excerpt(exchange.text(), BODY_SHOWN), "body"))
        else:
            lines.append("(binary body not shown)")
    return "\n".join(lines)


def _check_args(args: Mapping[str, Any]) -> tuple[str, str, dict[str, str], bytes | None]:
    method = str(args.get("method", "")).upper()
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {args.get('method')!r}")
    url = args.get("url")
    if not isinstance(url, str) or not url:
        raise ValueError("url must be an http(s) URL string")
    headers = args.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                   for k, v in headers.items()):
        raise ValueError('headers must be an object of string values, e.g. {"Accept": "application/json"}')
    if any(ch in k + v for k, v in headers.items() for ch in "\r\n\x00"):
        raise ValueError("header names and values may not contain line breaks or NUL")
    body = args.get("body")
    if body is not None and not isinstance(body, str):
        raise ValueError("body must be a string")
    return method, url, dict(headers), body.encode("utf-8") if body is not None else None


async def run_http_request(args: Mapping[str, Any], ctx: Any, config: HttpConfig, sleep: Sleep = asyncio.sleep,
                           resolver: Resolver | None = None) -> ToolResult:
    from .egress_policy import admit_egress, redirect_check
    from .guarded_exchange import ExchangeOptions, HttpFailure, exchange_with_retries
    from .ssrf_guard import SsrfBlocked, check_url

    try:
        method, url, headers, body = _check_args(args)
        target = await check_url(url, config.private_hosts, resolver)  # before asking: a block never prompts
    except ValueError as exc:
        return ToolResult.error(f"{TOOL_NAME}: {exc}", invalidArgs=[str(exc)])
    except SsrfBlocked as exc:
        return ToolResult.error(f"{TOOL_NAME}: blocked by the SSRF guard: {exc}", ssrfBlocked=True)
    decision = await admit_egress(ctx, TOOL_NAME, method, url, target.host, config, headers, body,
                                  always_gate=True)
    if not decision.allowed:
        if decision.refused:
            return ToolResult.error(f"{TOOL_NAME}: {decision.message}", notAllowlisted=True)
        return ToolResult.error(decision.message, denied=True)
    same_policy = redirect_check(decision, config)

    timeout = float(args.get("timeout_s") or config.timeout_s)
    # approval covered this host: redirects are followed only within it (and only for GET/HEAD)
    follow = "same-host" if method in ("GET", "HEAD") else "none"
    opts = ExchangeOptions(config.private_hosts, timeout, config.max_response_bytes, config.max_redirects, follow,
                           same_policy, resolver)
    try:
        exchange = await exchange_with_retries(method, url, headers, body, opts,
                                               retry_policy(config.max_retries, config.retry_base_delay_ms,
                                                            config.retry_max_delay_ms), sleep, first=target)
    except SsrfBlocked as exc:
        return ToolResult.error(f"{TOOL_NAME}: blocked by the SSRF guard: {exc}", ssrfBlocked=True)
    except HttpFailure as exc:
        return ToolResult.error(f"{TOOL_NAME}: {exc}", timedOut=exc.timed_out, attempts=exc.attempts)
    details = {"status": exchange.status, "url": exchange.url, "headers": dict(exchange.headers),
               "body": exchange.text() if is_textual(exchange.content_type) else f"<{len(exchange.body)} bytes>",
               "bodyBytes": len(exchange.body), "truncated": exchange.truncated, "attempts": exchange.attempts,
               "waits": list(exchange.waits), "redirects": list(exchange.redirects)}
    status = "ok" if exchange.status < 400 else "error"
    return ToolResult(status, _summary(method, exchange), details)


def http_tool_spec(runtime: RuntimeView) -> ToolSpec:
    config = http_config(runtime)

    async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
        return await run_http_request(args, ctx, config)

    return ToolSpec(name=TOOL_NAME, summary="Send an HTTP request (method, url, headers, body) and get the status and "
                    "body; private and loopback addresses are blocked unless allowed in config.",
                    args_schema=ARGS_SCHEMA, resource_class=ResourceClass.APPROVAL_GATED, run=run, tier=Tier.RARE,
                    approval_category=CATEGORY, example=EXAMPLE)
