"""The Telegram Bot API over httpx: the only module of the plugin that talks HTTP.

Each method is one POST to `<apiBase>/bot<token>/<method>` with a JSON body; the answer's
`result` is returned, anything else raises BotApiError with the status, Telegram's
description and `retry_after` (429). Transport failures (network loss, timeouts, a 5xx)
raise BotApiError with `transient` set. No error text ever carries the token: it is in
every URL, so messages are scrubbed before they leave this module.
"""

from __future__ import annotations

from typing import Any

from .bot_token import scrub

PARSE_ERRORS = ("can't parse entities", "unsupported start tag", "can't find end of")


class BotApiError(Exception):
    def __init__(self, method: str, status: int, description: str, *, retry_after: float | None = None,
                 transient: bool = False, maybe_delivered: bool = False) -> None:
        super().__init__(f"{method}: {status or 'network'} {description}".strip())
        self.method = method
        self.status = status
        self.description = description
        self.retry_after = retry_after
        self.transient = transient
        # only a request that reached the server and got no answer may have been acted on
        self.maybe_delivered = maybe_delivered

    @property
    def unauthorized(self) -> bool:
        return self.status == 401

    @property
    def conflict(self) -> bool:
        return self.status == 409

    @property
    def parse_rejected(self) -> bool:
        text = self.description.lower()
        return self.status == 400 and any(marker in text for marker in PARSE_ERRORS)


class BotApi:
    """One bot's client. `poll_timeout_s` is the long poll of getUpdates; the HTTP read
    timeout leaves room for it."""

    def __init__(self, api_base: str, token: str, *, request_timeout_s: float = 20.0) -> None:
        import httpx

        self._token = token
        self._base = f"{api_base.rstrip('/')}/bot{token}/"
        self._request_timeout_s = request_timeout_s
        self._client = httpx.AsyncClient(timeout=httpx.Timeout(request_timeout_s, connect=10.0), trust_env=False)

    async def close(self) -> None:
        await self._client.aclose()

    async def call(self, method: str, payload: dict[str, Any] | None = None,
                   read_timeout_s: float | None = None) -> Any:
        import httpx

        timeout = None
        if read_timeout_s is not None:
            timeout = httpx.Timeout(read_timeout_s, connect=10.0)
        try:
            response = await self._client.post(self._base + method, json=payload or {},
                                               timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT)
        except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
            raise BotApiError(method, 0, scrub(f"{type(exc).__name__}: {exc}", self._token), transient=True) from None
        except httpx.HTTPError as exc:  # sent, but the answer was lost: the server may have acted on it
            raise BotApiError(method, 0, scrub(f"{type(exc).__name__}: {exc}", self._token), transient=True,
                              maybe_delivered=True) from None
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code == 200 and isinstance(body, dict) and body.get("ok"):
            return body.get("result")
        description = str(body.get("description", "")) if isinstance(body, dict) else ""
        params = body.get("parameters") if isinstance(body, dict) else None
        retry_after = params.get("retry_after") if isinstance(params, dict) else None
        raise BotApiError(method, response.status_code, scrub(description or response.reason_phrase, self._token),
                          retry_after=float(retry_after) if isinstance(retry_after, (int, float)) else None,
                          transient=response.status_code >= 500)

    # -- the methods the channel uses ---------------------------------------------------------
    async def get_me(self) -> dict[str, Any]:
        return await self.call("getMe")

    async def get_updates(self, offset: int | None, timeout_s: int) -> list[dict[str, Any]]:
        payload: dict[str, Any] = {"timeout": timeout_s, "allowed_updates": ["message", "callback_query"]}
        if offset is not None:
            payload["offset"] = offset
        result = await self.call("getUpdates", payload, read_timeout_s=timeout_s + self._request_timeout_s)
        return [u for u in result if isinstance(u, dict)] if isinstance(result, list) else []

    async def send_message(self, chat_id: int, text: str, *, html: bool = False,
                           reply_markup: dict[str, Any] | None = None) -> int:
        payload: dict[str, Any] = {"chat_id": chat_id, "text": text}
        if html:
            payload["parse_mode"] = "HTML"
            payload["disable_web_page_preview"] = True
        if reply_markup is not None:
            payload["reply_markup"] = reply_markup
        result = await self.call("sendMessage", payload)
        return int(result.get("message_id", 0)) if isinstance(result, dict) else 0

    async def edit_message_text(self, chat_id: int, message_id: int, text: str) -> None:
        await self.call("editMessageText", {"chat_id": chat_id, "message_id": message_id, "text": text,
                                            "reply_markup": {"inline_keyboard": []}})

    async def answer_callback_query(self, callback_query_id: str, text: str = "") -> None:
        await self.call("answerCallbackQuery", {"callback_query_id": callback_query_id, "text": text})

    async def set_my_commands(self, commands: list[tuple[str, str]]) -> None:
        await self.call("setMyCommands", {"commands": [{"command": c, "description": d} for c, d in commands]})
