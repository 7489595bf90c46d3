"""GET/POST /api/telegram: the Telegram channel of the running server, live.

Operator only (the X-Atomic-Operator token, or the API key when one is set): the channel
decides who controls the agent from a phone. POST takes `{"action": ..., "token"?,
"seconds"?}` (the actions of `atomic-agent telegram`); every change is persisted first
(config.json, or `.env` for the token) and then applied. Answers carry the channel status,
which never contains the token.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.serve.client_identity import OPERATOR_HEADER, caller_of
from atomic_agent.plugins.serve.error_envelope import ApiError
from atomic_agent.plugins.serve.request_body import json_body
from atomic_agent.plugins.telegram.telegram_contract import TELEGRAM_SERVICE, TelegramControl


def _channel(request: Any) -> TelegramControl:
    ctx = request.app.state.ctx
    if not caller_of(request, ctx.settings).operator:
        raise ApiError(403, f"the Telegram channel is controlled from the operator's surface only (send "
                       f"{OPERATOR_HEADER}, or the API key)", code="operator_only")
    try:
        channel: TelegramControl = ctx.runtime.service(TELEGRAM_SERVICE)
        return channel
    except KeyError:
        raise ApiError(404, "the telegram plugin is not loaded in this server", code="telegram_unavailable") from None


async def telegram_status(request: Any) -> Any:
    from starlette.responses import JSONResponse

    return JSONResponse({"object": "telegram", **_channel(request).status()})


async def telegram_control(request: Any) -> Any:
    from starlette.responses import JSONResponse

    channel = _channel(request)
    body = await json_body(request, request.app.state.ctx.settings.max_body_bytes)
    action, token, seconds = body.get("action"), body.get("token"), body.get("seconds")
    if not isinstance(action, str) or (token is not None and not isinstance(token, str)) or \
            (seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, (int, float))
                                      or not 5 <= seconds <= 600)):
        raise ApiError(400, "send {\"action\": \"enable|disable|restart|pair|cancel_pairing|clear_owner|set_token|"
                       "clear_token|status\", \"token\"?: string, \"seconds\"?: 5..600}", code="invalid_value")
    try:
        status = await channel.control(action, token=token, seconds=seconds)
    except ValueError as exc:
        raise ApiError(400, channel.scrub(str(exc)), code="telegram_refused") from None
    return JSONResponse({"object": "telegram", **status})
