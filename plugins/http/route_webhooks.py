"""POST /api/webhooks/{name}: a configured endpoint's JSON body becomes a task (never a turn
run in the request): 202 with the task id; the scheduler runs it.

Unknown names (and a server without the tasks plugin) answer 404; a body over the
endpoint's cap 413; a wrong or missing credential 401 (checked in constant time, before
the body is parsed); a body that is not JSON 400; a template path the body lacks 422.
Webhook routes authenticate with their own credentials, not serve's bearer key.
"""

from __future__ import annotations

import json
from typing import Any

from atomic_agent.plugins.http.error_envelope import ApiError
from atomic_agent.plugins.http.webhook_auth import credentials_ok
from atomic_agent.plugins.http.webhook_config import WEBHOOKS_BLOCK
from atomic_agent.plugins.http.webhook_template import TemplatePathError, render_template


async def _raw_body(request: Any, cap: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise ApiError(413, f"the webhook body of {declared} bytes exceeds this endpoint's limit of {cap} bytes",
                       code="body_too_large")
    chunks: list[bytes] = []
    size = 0
    async for piece in request.stream():
        size += len(piece)
        if size > cap:
            raise ApiError(413, f"the webhook body exceeds this endpoint's limit of {cap} bytes",
                           code="body_too_large")
        chunks.append(piece)
    return b"".join(chunks)


async def receive_webhook(request: Any) -> Any:
    from starlette.responses import JSONResponse

    ctx = request.app.state.ctx
    runtime = ctx.runtime
    name = request.path_params["name"]
    block = runtime.config.block(WEBHOOKS_BLOCK) if WEBHOOKS_BLOCK in getattr(runtime.config, "blocks", {}) else None
    endpoint = block.endpoints.get(name) if block is not None else None
    tasks = runtime.service("tasks", None)
    if endpoint is None or tasks is None or not tasks.config.enabled:
        raise ApiError(404, f"no webhook {name!r} on this server", code="not_found")
    raw = await _raw_body(request, endpoint.max_body_bytes)
    environ = getattr(runtime, "environ", {})
    secret = environ.get(endpoint.secret_env) if endpoint.secret_env else None
    hmac_key = environ.get(endpoint.hmac_secret_env) if endpoint.hmac_secret_env else None
    headers = {k.lower(): v for k, v in request.headers.items()}
    if not credentials_ok(headers, raw, secret, hmac_key):
        raise ApiError(401, "the webhook credentials are missing or wrong", "authentication_error",
                       code="invalid_webhook_credentials")
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "the webhook body is not JSON", code="invalid_json") from None
    try:
        message = render_template(endpoint.message_template, body)
    except TemplatePathError as exc:
        raise ApiError(422, str(exc), code="template_path_missing", extra={"param": exc.path}) from None
    session_id = None
    if endpoint.session_mode == "persistent":
        session_id = tasks.named_session(f"webhook:{name}", ctx.settings.working_dir)
    try:
        task = tasks.create(message, origin="webhook", wake_source="webhook", session_id=session_id,
                            working_dir=ctx.settings.working_dir)
    except tasks.ValidationError as exc:
        raise ApiError(422, f"the rendered message is not a valid task: {exc.problem}", code="invalid_value",
                       extra={"param": exc.field}) from None
    tasks.metrics.inc("agent.webhooks.received", webhook_name=name)
    return JSONResponse({"taskId": task.id, "sessionId": task.session_id}, status_code=202)
