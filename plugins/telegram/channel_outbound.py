"""What the channel sends: plain notices, durable deliveries, the replies still owed.

A mixin of TelegramChannel. `_send_owed` runs at every polling cycle (and when a
redelivered update finds its turn): it starts sending every pending record nobody in this
process is sending, and fills the text of replies whose turn ended where no handler was
waiting for it (a turn recovery ran after a restart).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from .bot_api import BotApiError
from .delivery_store import PENDING, REPORT, Delivery
from .reply_text import from_answer

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Coroutine

    from atomic_agent.api import RuntimeView

MAX_REPORT_CHARS = 3000


class ChannelOutbound:
    runtime: RuntimeView
    api: Any
    store: Any
    outbound: Any
    owner_user_id: int | None
    _routed: str | None

    if TYPE_CHECKING:  # TelegramChannel's own methods, declared for the type checker only
        def scrub(self, text: str) -> str: ...
        def spawn(self, work: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    # -- outbound -------------------------------------------------------------------------------
    async def send_notice(self, chat_id: int, text: str) -> None:
        """Channel infrastructure: plain, not durable (an ack nobody is owed after a crash)."""
        if self.api is None:
            return
        try:
            await self.outbound.send_plain(self.api, chat_id, self.scrub(text))
        except BotApiError as exc:
            print(f"atomic-agent: telegram notice not sent: {self.scrub(str(exc))}", file=sys.stderr)

    async def deliver(self, delivery: Delivery) -> Delivery:
        if self.api is None:
            return delivery  # stays pending: the next start sends it
        return await self.outbound.deliver(self.api, delivery)

    def wake_owed(self) -> None:
        self._send_owed()

    def _send_owed(self) -> None:
        """Start sending every pending record nobody in this process is sending; fill the text
        of replies whose turns ended in a process that died."""
        if self.api is None:
            return
        running = {self.runtime.running_turn_id(s) for s in [self._routed] if s}
        for delivery in self.store.in_state(PENDING):
            if delivery.body is None:
                if delivery.turn_id is None or delivery.turn_id in running:
                    continue
                answer = self.runtime.answer_of(delivery.turn_id)
                if answer.answered_by not in ("", delivery.turn_id) and answer.outcome != "pending" \
                        and self.store.for_turn(answer.answered_by) is not None:
                    self.store.drop_merged(delivery.id)  # that turn's own record delivers the answer
                    continue
                reply = from_answer(answer)
                if reply is None:
                    continue
                delivery = self.store.set_body(delivery.id, reply.body, reply.formatted)
                if delivery.body is None:
                    continue
            elif self.outbound.is_sending(delivery.id):
                continue
            self.spawn(self.deliver(delivery))

    async def send_report(self, target: str, text: str) -> Delivery:
        """A scheduled task's report for the owner (plain, durable): the `report_sink` service
        the tasks plugin sends `notify` outcomes to. Raises when it cannot be sent, so the
        caller records why."""
        if target != "telegram":
            raise ValueError(f"the telegram channel cannot deliver to {target!r}")
        if self.owner_user_id is None:
            raise RuntimeError("no Telegram owner is paired yet; run `atomic-agent telegram pair`")
        if len(text) > MAX_REPORT_CHARS:
            text = text[:MAX_REPORT_CHARS] + "… [truncated]"
        delivery = self.store.record(REPORT, self.owner_user_id, self.scrub(text.strip()), formatted=False)
        delivery = await self.deliver(delivery)
        if delivery.state != "delivered":
            raise RuntimeError(f"the report was not delivered ({delivery.state}: {delivery.error or 'no detail'})")
        return delivery

