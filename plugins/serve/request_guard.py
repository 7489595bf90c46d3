"""The ASGI middleware in front of every `serve` route: framing, Host, Origin, body type and CORS.

It runs before authentication (a preflight carries no credentials) and answers refusals
itself with the standard error envelope. CORS preflights are answered only for origins in
`serve.allowedOrigins`; responses to such origins carry `Access-Control-Allow-Origin`.
Streaming responses pass through untouched.
"""

from __future__ import annotations

import json
from typing import Any

from atomic_agent.plugins.serve.origin_policy import (
    OriginPolicy,
    Refusal,
    check_body_type,
    check_host,
    check_origin,
    normalise_origin,
)
from atomic_agent.plugins.serve.request_framing import framing_refusal

ALLOWED_METHODS = b"GET, POST, DELETE, OPTIONS"
ALLOWED_HEADERS = (b"authorization, content-type, x-atomic-session, x-atomic-extensions, x-atomic-client, "
                   b"x-atomic-operator")
EXPOSED_HEADERS = b"x-atomic-session, x-atomic-turn, x-atomic-client"


def _headers(scope: dict[str, Any]) -> dict[bytes, bytes]:
    out: dict[bytes, bytes] = {}
    for key, value in scope.get("headers") or []:
        out.setdefault(key.lower(), value)  # the first of a repeated header decides
    return out


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")


async def _refuse(send: Any, refusal: Refusal) -> None:
    body = json.dumps({"error": {"message": refusal.message, "type": "invalid_request_error",
                                 "code": refusal.code}}).encode()
    await send({"type": "http.response.start", "status": refusal.status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"vary", b"Origin")]})
    await send({"type": "http.response.body", "body": body})


class RequestGuard:
    def __init__(self, app: Any, policy: OriginPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = framing_refusal(scope.get("headers") or [])
        if refusal is not None:
            await _refuse(send, refusal)
            return
        headers = _headers(scope)
        host, origin = _text(headers.get(b"host")), _text(headers.get(b"origin"))
        refusal = check_host(self.policy, host) or check_origin(self.policy, origin,
                                                                _text(headers.get(b"sec-fetch-site")), host)
        if refusal is not None:
            await _refuse(send, refusal)
            return
        method = scope.get("method", "GET")
        if method == "OPTIONS" and origin is not None and b"access-control-request-method" in headers:
            await self._preflight(send, origin)
            return
        has_body = headers.get(b"content-length", b"0") not in (b"0", b"") or b"transfer-encoding" in headers
        refusal = check_body_type(method, _text(headers.get(b"content-type")), has_body)
        if refusal is not None:
            await _refuse(send, refusal)
            return
        if origin is None or normalise_origin(origin) not in self.policy.allowed_origins:
            await self.app(scope, receive, send)
            return

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []),
                                                  (b"access-control-allow-origin", origin.encode("latin-1")),
                                                  (b"access-control-expose-headers", EXPOSED_HEADERS),
                                                  (b"vary", b"Origin")]}
            await send(message)

        await self.app(scope, receive, send_with_cors)

    async def _preflight(self, send: Any, origin: str) -> None:
        if normalise_origin(origin) not in self.policy.allowed_origins:
            await _refuse(send, Refusal(403, "origin_not_allowed", f"no CORS for {origin!r}: it is not in "
                                        "serve.allowedOrigins"))
            return
        await send({"type": "http.response.start", "status": 204,
                    "headers": [(b"access-control-allow-origin", origin.encode("latin-1")),
                                (b"access-control-allow-methods", ALLOWED_METHODS),
                                (b"access-control-allow-headers", ALLOWED_HEADERS),
                                (b"access-control-max-age", b"600"), (b"vary", b"Origin"),
                                (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b""})
