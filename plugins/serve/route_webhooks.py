"""POST /api/webhooks/{name}: a configured endpoint's JSON body becomes a task (never a turn
run in the request): 202 with the task id; the scheduler runs it.

Unknown names (and a server without the tasks plugin) answer 404; a body over the
endpoint's cap 413; a wrong or missing credential, or a stale signed timestamp, 401
(checked in constant time, before the body is parsed, see `webhook_auth`); a body that is
not JSON, or JSON nested deeper than the other routes accept, 400; a template path the
body lacks 422; a signed delivery accepted before (its signature or GitHub delivery id)
409 `webhook_replayed`, creating nothing.

`Idempotency-Key` makes a retry safe: the same key with the same body answers 202 with
the first call's task (header `Idempotent-Replayed: true`) and creates nothing; the same
key with another body is 422 `idempotency_key_reused`. The key is looked up before the
replay check, so a sender that retries a call it already signed gets its first answer.
Webhook routes authenticate with their own credentials, not serve's bearer key.
"""

from __future__ import annotations

import time
from typing import Any

from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.idempotent_replay import idempotency_key
from atomic_agent.plugins.serve.json_limits import JsonLimitError, parse_json
from atomic_agent.plugins.serve.webhook_auth import check_credentials
from atomic_agent.plugins.serve.webhook_config import WEBHOOKS_BLOCK
from atomic_agent.plugins.serve.webhook_deliveries import body_fingerprint
from atomic_agent.plugins.serve.webhook_template import TemplatePathError, render_template
from atomic_agent.plugins.tasks.tasks_contract import TASKS_SERVICE


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


def _headers(request: Any) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, value in request.headers.raw:
        out.setdefault(name.decode("latin-1").lower(), []).append(value.decode("latin-1"))
    return out


def _accepted(task_id: str, session_id: str | None, replayed: bool = False) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"taskId": task_id, "sessionId": session_id}, status_code=202,
                        headers={"Idempotent-Replayed": "true"} if replayed else None)


async def receive_webhook(request: Any) -> Any:
    ctx = request.app.state.ctx
    runtime = ctx.runtime
    name = request.path_params["name"]
    block = runtime.config.block(WEBHOOKS_BLOCK) if WEBHOOKS_BLOCK in getattr(runtime.config, "blocks", {}) else None
    endpoint = block.endpoints.get(name) if block is not None else None
    tasks = runtime.service(TASKS_SERVICE, None)
    if endpoint is None or tasks is None or not tasks.config.enabled:
        raise ApiError(404, f"no webhook {name!r} on this server", code="not_found")
    raw = await _raw_body(request, endpoint.max_body_bytes)
    environ = getattr(runtime, "environ", {})
    secret = environ.get(endpoint.secret_env) if endpoint.secret_env else None
    hmac_key = environ.get(endpoint.hmac_secret_env) if endpoint.hmac_secret_env else None
    now = time.time()
    check = check_credentials(_headers(request), raw, secret, hmac_key, now)
    if not check.ok:
        raise ApiError(401, check.problem, "authentication_error", code=check.code)
    try:
        body = parse_json(raw)
    except JsonLimitError as exc:
        raise ApiError(400, f"the webhook body is not acceptable JSON: {exc}", code="invalid_json") from None
    key = idempotency_key(request)
    deliveries = ctx.webhook_deliveries()
    if key is not None:
        earlier = deliveries.begin_key(name, key, body_fingerprint(raw), now)
        if earlier is not None:
            return _answer_again(key, earlier, body_fingerprint(raw))
    try:
        task = _create(ctx, tasks, endpoint, name, body, check, deliveries, now)
    except BaseException:
        if key is not None:
            deliveries.release_key(name, key)
        raise
    if key is not None:
        deliveries.finish_key(name, key, task.id, task.session_id)
    tasks.metrics.inc("agent.webhooks.received", webhook_name=name)
    return _accepted(task.id, task.session_id)


def _answer_again(key: str, earlier: Any, fingerprint: str) -> Any:
    if earlier.fingerprint != fingerprint:
        raise ApiError(422, f"the Idempotency-Key {key!r} was already used with a different body on this webhook; "
                       "use a new key for a new delivery", code="idempotency_key_reused")
    if earlier.task_id is None:
        raise ApiError(409, f"the first call with Idempotency-Key {key!r} is still being handled; retry shortly "
                       "with the same key", code="idempotency_key_in_progress")
    return _accepted(earlier.task_id, earlier.session_id, replayed=True)


def _create(ctx: Any, tasks: Any, endpoint: Any, name: str, body: Any, check: Any, deliveries: Any,
            now: float) -> Any:
    try:
        message = render_template(endpoint.message_template, body)
    except TemplatePathError as exc:
        raise ApiError(422, str(exc), code="template_path_missing", extra={"param": exc.path}) from None
    seen = deliveries.claim(name, check.marks, check.keep_until, now)
    if seen is not None:
        what = "delivery id" if seen.startswith("github-delivery:") else "signature"
        raise ApiError(409, f"this webhook call was already accepted (its {what} was seen before): a replayed "
                       "delivery creates nothing. A sender retrying on purpose signs again with a new timestamp "
                       "and sends the same Idempotency-Key", code="webhook_replayed")
    session_id = None
    if endpoint.session_mode == "persistent":
        session_id = tasks.named_session(f"webhook:{name}", ctx.settings.working_dir)
    try:
        return tasks.create(message, origin="webhook", wake_source="webhook", session_id=session_id,
                            working_dir=ctx.settings.working_dir)
    except tasks.ValidationError as exc:
        raise ApiError(422, f"the rendered message is not a valid task: {exc.problem}", code="invalid_value",
                       extra={"param": exc.field}) from None
