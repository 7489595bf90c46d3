"""`telegram_status`, `telegram_control`: the Telegram channel of the running host, live.

Both go through the Telegram plugin's service ("telegram"): every change is persisted
(config.json, or `.env` for the token) before it is applied to the running channel. The
token is accepted by `set_token` and never echoed; a status carries only `hasToken`.
Without the Telegram plugin these answer `telegram_unavailable`.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError
from atomic_agent.plugins.telegram.telegram_contract import TELEGRAM_SERVICE, TelegramControl


def _telegram(server: Any) -> TelegramControl:
    try:
        channel: TelegramControl = server.runtime.service(TELEGRAM_SERVICE)
        return channel
    except KeyError:
        raise ProtocolError("telegram_unavailable", "the telegram plugin is not loaded in this sidecar "
                            "(check `atomic-agent plugins` and plugins.disabled)") from None


async def telegram_status(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    return {"telegram": _telegram(server).status()}


async def telegram_control(server: Any, request: dict[str, Any]) -> dict[str, Any]:
    channel = _telegram(server)
    try:
        status = await channel.control(request["action"], token=request.get("token"), seconds=request.get("seconds"))
    except ValueError as exc:
        raise ProtocolError("telegram_refused", channel.scrub(str(exc))) from None
    return {"telegram": status}


TELEGRAM_HANDLERS = {"telegram_status": telegram_status, "telegram_control": telegram_control}
