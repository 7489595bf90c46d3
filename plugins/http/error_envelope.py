"""Errors in the OpenAI envelope: `{"error": {"message", "type", "code"}}`.

Turn failures carry `type = agent.<category>` and `code = step_error:<category>`; other
errors use OpenAI's own types (invalid_request_error, authentication_error, ...).
"""

from __future__ import annotations

from typing import Any

TURN_FAILURE_STATUS = {"transport": 503, "grammar": 502, "model": 502, "tool": 500, "cancelled": 503}


class ApiError(Exception):
    def __init__(self, status: int, message: str, error_type: str = "invalid_request_error", code: str | None = None,
                 extra: dict[str, Any] | None = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.error_type = error_type
        self.code = code
        self.extra = extra or {}
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.error_type, "code": self.code}, **self.extra}


def envelope_response(error: ApiError) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse(error.body(), status_code=error.status, headers=error.headers)


def turn_failure(category: str, message: str, extra: dict[str, Any] | None = None) -> ApiError:
    """A failed turn as an API error. The message was already recorded in the session, so
    clients are told not to retry (a retry would send the message a second time)."""
    from atomic_agent.api import error_code, openai_error_type

    return ApiError(TURN_FAILURE_STATUS.get(category, 500), message, openai_error_type(category), error_code(category),
                    extra, headers={"x-should-retry": "false"})
