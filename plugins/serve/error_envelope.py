"""Errors in the OpenAI envelope: `{"error": {"message", "type", "code"}}`.

Turn failures carry `type = agent.<category>` and `code = step_error:<category>`; other
errors use OpenAI's own types (invalid_request_error, authentication_error, ...). A stopping
server answers `type = server_stopping`: `code = server_stopping` when nothing was admitted
(send it again after the restart) and `code = turn_parked` when the message was admitted and
is still owed (its `turnId` is in the body; retry with the same Idempotency-Key to get the
answer — a retry without one would send the message twice).
"""

from __future__ import annotations

from typing import Any

TURN_FAILURE_STATUS = {"transport": 503, "provider_timeout": 504, "grammar": 502, "model": 502, "tool": 500,
                       "storage": 507, "cancelled": 503}
RETRY_AFTER_S = 5  # a restarted server is usually back well within this


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
    from atomic_agent.api import failure_taxonomy

    code = failure_taxonomy.error_code(category)  # ValueError for a category the taxonomy does not have
    # the OpenAI-compatible `error.type`: `agent.<category>`
    return ApiError(TURN_FAILURE_STATUS.get(category, 500), message, f"agent.{category}", code,
                    extra, headers={"x-should-retry": "false"})


def stopping_error() -> ApiError:
    """Nothing was admitted because the server is stopping: the same request may be sent again."""
    return ApiError(503, "the server is stopping and accepts no new messages; nothing was written — send the "
                    "request again once it has restarted", "server_stopping", "server_stopping",
                    headers={"retry-after": str(RETRY_AFTER_S), "x-should-retry": "true"})


def storage_unavailable_error(exc: BaseException) -> ApiError:
    """The session store (a shared database, mostly) failed before this request was acknowledged:
    nothing of it was admitted, so the same request may be sent again — with the same
    Idempotency-Key, which finds the turn in the one case the store cannot know (a commit
    whose answer was lost)."""
    return ApiError(503, f"the session store is unavailable ({exc}); this request was not acknowledged — send it "
                    "again with the same Idempotency-Key", "storage_unavailable", "storage_unavailable",
                    headers={"retry-after": str(RETRY_AFTER_S), "x-should-retry": "true"})


def parked_error(turn_id: str, session_id: str, *, started: bool, keyed: bool,
                 extra: dict[str, Any] | None = None) -> ApiError:
    """The message was admitted, and the server stopped before answering it: it is owed."""
    how = ("was interrupted at a step boundary" if started else "is still queued")
    retry = ("retry with the same Idempotency-Key to receive the answer" if keyed else
             "the answer will be in the session (GET /api/sessions/{id}); do not send the message again (sending "
             "an Idempotency-Key header makes such retries safe)")
    message = (f"the server is stopping: your message was accepted (turn {turn_id}) and {how}; the next start of the "
               f"server answers it — {retry}")
    return ApiError(503, message, "server_stopping", "turn_parked",
                    {"turnId": turn_id, "sessionId": session_id, **(extra or {})},
                    headers={"retry-after": str(RETRY_AFTER_S), "x-should-retry": "true" if keyed else "false"})
