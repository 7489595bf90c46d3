"""Bearer-token check on every route when an API key is configured (a plain ASGI middleware,
so streaming responses pass through untouched). Webhook routes are the exception: they
check their own per-endpoint secret or HMAC signature (route_webhooks)."""

from __future__ import annotations

import hmac
import json
from typing import Any

WEBHOOK_PATH_PREFIX = "/api/webhooks/"


class BearerAuth:
    def __init__(self, app: Any, api_key: str) -> None:
        self.app = app
        self._expected = f"Bearer {api_key}".encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        # webhooks carry their own credentials: only their one route (POST, one name segment) skips the key
        if scope.get("method") == "POST" and path.startswith(WEBHOOK_PATH_PREFIX) and \
                "/" not in path[len(WEBHOOK_PATH_PREFIX):]:
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if hmac.compare_digest(given, self._expected):
            await self.app(scope, receive, send)
            return
        reason = "no Authorization header was sent" if not given else "the API key is not valid"
        body = json.dumps({"error": {"message": f"{reason}; send 'Authorization: Bearer <key>' with the key this "
                                                "server was started with", "type": "invalid_request_error",
                                     "code": "invalid_api_key"}}).encode()
        await send({"type": "http.response.start", "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"www-authenticate", b"Bearer")]})
        await send({"type": "http.response.body", "body": body})
