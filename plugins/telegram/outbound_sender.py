"""Sending text to the owner: chunking, HTML per chunk, the plain-text fallback, 429s, 5xx.

`deliver` sends a durable delivery record (a reply or a report) chunk by chunk, marking
each chunk `attempting` before the send and recording its message id after (see
delivery_store). `send_plain` sends channel infrastructure (acks, notices) that nobody
owes durably. Both:

- split the raw text into chunks of at most 4,096 UTF-16 units first and convert each
  chunk on its own (HTML only for agent content, only in parseMode html), so markdown cut
  by a chunk boundary degrades to literal text;
- retry a chunk Telegram refused with "can't parse entities" once, as the raw text with
  no parse mode (the operator sees the model's words, not broken tags);
- honour 429 `retry_after`; retry a 5xx a few times;
- treat a send whose answer was lost (the request reached the server) as `uncertain`,
  never resent; one that never reached it as not sent (tried again later).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from .bot_api import BotApi, BotApiError
from .channel_metrics import ChannelMetrics
from .chunk_text import chunk_text
from .delivery_store import DELIVERED, FAILED, Delivery, DeliveryStore
from .markdown_html import markdown_to_html

MAX_RATE_LIMIT_WAITS = 5
MAX_RETRY_AFTER_S = 60.0
SERVER_ERROR_DELAYS_S = (0.5, 2.0)

Sleep = Callable[[float], Awaitable[None]]


@attrs.define
class ChunkOutcome:
    message_id: int
    parse_fallback: bool


class OutboundSender:
    def __init__(self, store: DeliveryStore, metrics: ChannelMetrics, html_enabled: Callable[[], bool],
                 sleep: Sleep = asyncio.sleep) -> None:
        self.store = store
        self.metrics = metrics
        self._html_enabled = html_enabled
        self._sleep = sleep
        self._sending: set[int] = set()  # delivery ids a task of this process is sending
        self._in_flight = 0  # requests Telegram has not answered yet
        self._idle = asyncio.Event()
        self._idle.set()

    def is_sending(self, delivery_id: int) -> bool:
        return delivery_id in self._sending

    async def settle(self, grace_s: float) -> bool:
        """Wait up to grace_s for the requests already on the wire to be answered, so a
        graceful stop records their message ids instead of leaving them uncertain; True when
        none is left."""
        try:
            await asyncio.wait_for(self._idle.wait(), grace_s)
        except asyncio.TimeoutError:
            return False
        return True

    async def _send_chunk(self, api: BotApi, chat_id: int, chunk: str, html: bool,
                          reply_markup: dict[str, Any] | None = None) -> ChunkOutcome:
        text, fallback = (markdown_to_html(chunk), False) if html else (chunk, False)
        waits = 0
        server_errors = 0
        while True:
            try:
                message_id = await self._on_the_wire(api.send_message(
                    chat_id, text, html=html and not fallback, reply_markup=reply_markup))
                return ChunkOutcome(message_id, fallback)
            except BotApiError as exc:
                if exc.parse_rejected and html and not fallback:
                    text, fallback = chunk, True  # once, as the raw text with no parse mode
                    self.metrics.inc("parse_fallbacks")
                    continue
                if exc.status == 429 and waits < MAX_RATE_LIMIT_WAITS:
                    waits += 1
                    await self._sleep(min(exc.retry_after or 1.0, MAX_RETRY_AFTER_S))
                    continue
                if exc.status >= 500 and server_errors < len(SERVER_ERROR_DELAYS_S):
                    await self._sleep(SERVER_ERROR_DELAYS_S[server_errors])
                    server_errors += 1
                    continue
                raise

    async def _on_the_wire(self, request: Awaitable[int]) -> int:
        # The caller records the answer before it next yields, so idle means recorded.
        self._in_flight += 1
        self._idle.clear()
        try:
            return await request
        finally:
            self._in_flight -= 1
            if self._in_flight == 0:
                self._idle.set()

    async def send_plain(self, api: BotApi, chat_id: int, text: str,
                         reply_markup: dict[str, Any] | None = None) -> list[int]:
        """Channel infrastructure, never formatted; the message ids of the chunks sent."""
        ids: list[int] = []
        chunks = chunk_text(text)
        for index, chunk in enumerate(chunks):
            markup = reply_markup if index == len(chunks) - 1 else None
            ids.append((await self._send_chunk(api, chat_id, chunk, False, markup)).message_id)
        return ids

    async def deliver(self, api: BotApi, delivery: Delivery) -> Delivery:
        """Send what is left of a pending record with a body; returns the record as it ended up
        (delivered, pending when a chunk did not reach Telegram, failed or uncertain)."""
        if delivery.body is None or delivery.id in self._sending:
            return delivery
        self._sending.add(delivery.id)
        try:
            return await self._deliver(api, delivery)
        finally:
            self._sending.discard(delivery.id)

    async def _deliver(self, api: BotApi, delivery: Delivery) -> Delivery:
        assert delivery.body is not None
        chunks = chunk_text(delivery.body)
        html = delivery.formatted and self._html_enabled()
        current = delivery
        for index in range(delivery.chunks_sent, len(chunks)):
            if not self.store.mark_attempting(delivery.id, len(chunks)):
                return self.store.get(delivery.id) or current
            try:
                outcome = await self._send_chunk(api, delivery.chat_id, chunks[index], html)
            except BotApiError as exc:
                return self._settle_failure(delivery.id, exc)
            except asyncio.CancelledError:
                self.store.uncertain(delivery.id, "the send was cancelled before Telegram answered")
                raise
            current = self.store.chunk_sent(delivery.id, outcome.message_id, outcome.parse_fallback)
        if current.state == DELIVERED:
            self.metrics.inc("messages_sent", kind=current.kind)
            self.metrics.inc("deliveries", state=DELIVERED)
        return current

    def _settle_failure(self, delivery_id: int, exc: BotApiError) -> Delivery:
        error = str(exc)
        if exc.maybe_delivered:
            self.store.uncertain(delivery_id, error)
            self.metrics.inc("deliveries", state="uncertain")
        elif exc.transient or exc.status in (401, 429) or exc.status >= 500:
            self.store.chunk_not_sent(delivery_id, error)  # never reached a chat: send again later
        else:
            self.store.fail(delivery_id, error)
            self.metrics.inc("deliveries", state=FAILED)
        return self.store.get(delivery_id)  # type: ignore[return-value]
