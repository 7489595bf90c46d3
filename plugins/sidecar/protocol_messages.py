"""The shapes of the lines the sidecar writes: responses (one per request) and events."""

from __future__ import annotations

from typing import Any

RequestId = str | int | None


class ProtocolError(Exception):
    """A request that cannot be served; becomes an `ok: false` response with this code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def ok_response(request_id: RequestId, request_type: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"type": "response", "id": request_id, "request": request_type, "ok": True, "result": result}


def error_response(request_id: RequestId, request_type: str | None, code: str, message: str) -> dict[str, Any]:
    return {"type": "response", "id": request_id, "request": request_type, "ok": False,
            "error": {"code": code, "message": message}}


def event_message(event: dict[str, Any]) -> dict[str, Any]:
    return {"type": "event", "event": event}
