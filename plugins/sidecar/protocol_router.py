"""From one input line to exactly one response: parse, check the envelope, validate, dispatch.

Bad input never stops the sidecar: malformed JSON, a line that is not an object, a
missing id, an oversized line, an unknown type and a request that breaks the schema all
get an `ok: false` response naming the problem (`id: null` when no usable id was sent).
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from atomic_agent.plugins.sidecar.approval_requests import APPROVAL_HANDLERS
from atomic_agent.plugins.sidecar.lifecycle_requests import LIFECYCLE_HANDLERS
from atomic_agent.plugins.sidecar.line_reader import LineTooLong
from atomic_agent.plugins.sidecar.mcp_requests import MCP_HANDLERS
from atomic_agent.plugins.sidecar.memory_requests import MEMORY_HANDLERS
from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError, error_response, ok_response
from atomic_agent.plugins.sidecar.protocol_schema import REQUEST_TYPES, request_problem
from atomic_agent.plugins.sidecar.session_requests import SESSION_HANDLERS
from atomic_agent.plugins.sidecar.task_requests import TASK_HANDLERS
from atomic_agent.plugins.sidecar.telegram_requests import TELEGRAM_HANDLERS
from atomic_agent.plugins.sidecar.turn_requests import TURN_HANDLERS

Handler = Callable[[Any, dict[str, Any]], Awaitable[dict[str, Any]]]
HANDLERS: dict[str, Handler] = {**LIFECYCLE_HANDLERS, **SESSION_HANDLERS, **TURN_HANDLERS, **APPROVAL_HANDLERS,
                               **MCP_HANDLERS, **TELEGRAM_HANDLERS, **TASK_HANDLERS, **MEMORY_HANDLERS}
assert set(HANDLERS) == set(REQUEST_TYPES), "every published request type has exactly one handler"


def _usable_id(value: object) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, str) and 0 < len(value) <= 200)


def _parse(item: bytes | LineTooLong, max_bytes: int) -> dict[str, Any]:
    """The request object, or a ProtocolError for a line that is not one."""
    if isinstance(item, LineTooLong):
        raise ProtocolError("line_too_long", f"a request line of {item.size} bytes exceeds the limit of {max_bytes} "
                            "bytes (sidecar.maxLineBytes) and was skipped; send large content in smaller messages")
    try:
        text = item.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError("parse_error", f"the line is not UTF-8 (byte {exc.start}); "
                            "encode requests as UTF-8 JSON") from None
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ProtocolError("parse_error", f"the line is not valid JSON ({exc.msg} at column {exc.colno}); "
                            "send one JSON object per line") from None
    if not isinstance(message, dict):
        raise ProtocolError("invalid_request", f"each line must be a JSON object, got {type(message).__name__}")
    return message


async def handle_item(server: Any, item: bytes | LineTooLong) -> None:
    if isinstance(item, bytes) and not item.strip():
        return  # blank lines are keep-alives, not requests
    request_id: Any = None
    request_type: str | None = None
    try:
        message = _parse(item, server.limits.max_line_bytes)
        raw_id = message.get("id")
        if not _usable_id(raw_id):
            raise ProtocolError("invalid_request", "the request has no usable id: set \"id\" to a non-empty string "
                                f"(up to 200 characters) or an integer (got {json.dumps(raw_id)})")
        request_id = raw_id
        raw_type = message.get("type")
        if not isinstance(raw_type, str):
            raise ProtocolError("invalid_request", "the request has no \"type\"; one of " + ", ".join(REQUEST_TYPES))
        if raw_type not in HANDLERS:
            raise ProtocolError("unknown_request_type", f"unknown request type {raw_type!r}; the sidecar understands "
                                + ", ".join(REQUEST_TYPES))
        request_type = raw_type
        if server.closing:
            raise ProtocolError("shutting_down", "the sidecar is shutting down and takes no more requests")
        problem = request_problem(request_type, message)
        if problem is not None:
            raise ProtocolError("invalid_request", problem)
        result = await HANDLERS[request_type](server, message)
    except ProtocolError as exc:
        server.send(error_response(request_id, request_type, exc.code, exc.message))
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        server.send(error_response(request_id, request_type, "internal_error", f"{type(exc).__name__}: {exc}"))
    else:
        server.send(ok_response(request_id, request_type, result))
    finally:
        server.run_after_response()
