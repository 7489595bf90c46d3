"""Reading a JSON request body with a size cap and a clear error for anything else."""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.json_limits import JsonLimitError, parse_json


async def json_body(request: Any, max_bytes: int, *, required: bool = True) -> dict[str, Any]:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise ApiError(413, f"the request body of {declared} bytes exceeds the limit of {max_bytes} bytes "
                       "(serve.maxBodyBytes)", code="body_too_large")
    chunks: list[bytes] = []
    size = 0
    async for piece in request.stream():  # counted as it arrives: a chunked upload cannot exhaust memory
        size += len(piece)
        if size > max_bytes:
            raise ApiError(413, f"the request body exceeds the limit of {max_bytes} bytes (serve.maxBodyBytes)",
                           code="body_too_large")
        chunks.append(piece)
    raw = b"".join(chunks)
    if not raw.strip():
        if required:
            raise ApiError(400, "the request needs a JSON object body", code="invalid_json")
        return {}
    try:
        body = parse_json(raw)
    except JsonLimitError as exc:
        raise ApiError(400, str(exc), code="invalid_json") from None
    if not isinstance(body, dict):
        raise ApiError(400, f"the request body must be a JSON object, got {type(body).__name__}", code="invalid_json")
    return body
