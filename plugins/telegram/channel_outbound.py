"""What the channel sends: plain notices, durable deliveries, the replies still owed.

`send_owed` runs at every polling cycle (and when a redelivered update finds its turn): it
starts sending every pending record nobody in this process is sending, and fills the text of
replies whose turn ended where no handler was waiting for it (a turn recovery ran after a
restart). It sends through the link's current client (none while the channel is down: the
records wait) and reads the delivery records and the sender the channel opens on first use.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from .bot_api import BotApi, BotApiError
from .delivery_store import PENDING, REPORT, Delivery, DeliveryStore
from .outbound_sender import OutboundSender
from .reply_text import from_answer

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

    from .polling_link import PollingLink
    from .session_route import SessionRoute

MAX_REPORT_CHARS = 3000


class ChannelOutbound:
    def __init__(self, runtime: RuntimeView, link: PollingLink, route: SessionRoute,
                 store_of: Callable[[], DeliveryStore], sender_of: Callable[[], OutboundSender],
                 owner_of: Callable[[], int | None], spawn: Callable[[Coroutine[Any, Any, Any]], Any]) -> None:
        self._runtime = runtime
        self._link = link
        self._route = route
        self._store_of = store_of
        self._sender_of = sender_of
        self._owner_of = owner_of
        self._spawn = spawn

    @property
    def _api(self) -> BotApi | None:
        return self._link.api

    # -- outbound -------------------------------------------------------------------------------
    async def send_notice(self, chat_id: int, text: str) -> None:
        """Channel infrastructure: plain, not durable (an ack nobody is owed after a crash)."""
        api = self._api
        if api is None:
            return
        try:
            await self._sender_of().send_plain(api, chat_id, self._link.scrub(text))
        except BotApiError as exc:
            print(f"atomic-agent: telegram notice not sent: {self._link.scrub(str(exc))}", file=sys.stderr)

    async def deliver(self, delivery: Delivery) -> Delivery:
        api = self._api
        if api is None:
            return delivery  # stays pending: the next start sends it
        return await self._sender_of().deliver(api, delivery)

    def send_owed(self) -> None:
        """Start sending every pending record nobody in this process is sending; fill the text
        of replies whose turns ended in a process that died."""
        if self._api is None:
            return
        store, runtime = self._store_of(), self._runtime
        running = {runtime.running_turn_id(s) for s in [self._route.routed] if s}
        for delivery in store.in_state(PENDING):
            if delivery.body is None:
                if delivery.turn_id is None or delivery.turn_id in running:
                    continue
                answer = runtime.answer_of(delivery.turn_id)
                if answer.answered_by not in ("", delivery.turn_id) and answer.outcome != "pending" \
                        and store.for_turn(answer.answered_by) is not None:
                    store.drop_merged(delivery.id)  # that turn's own record delivers the answer
                    continue
                reply = from_answer(answer)
                if reply is None:
                    continue
                delivery = store.set_body(delivery.id, reply.body, reply.formatted)
                if delivery.body is None:
                    continue
            elif self._sender_of().is_sending(delivery.id):
                continue
            self._spawn(self.deliver(delivery))

    async def send_report(self, target: str, text: str) -> Delivery:
        """A scheduled task's report for the owner (plain, durable): the `report_sink` service
        the tasks plugin sends `notify` outcomes to. Raises when it cannot be sent, so the
        caller records why."""
        if target != "telegram":
            raise ValueError(f"the telegram channel cannot deliver to {target!r}")
        owner = self._owner_of()
        if owner is None:
            raise RuntimeError("no Telegram owner is paired yet; run `atomic-agent telegram pair`")
        if len(text) > MAX_REPORT_CHARS:
            text = text[:MAX_REPORT_CHARS] + "… [truncated]"
        delivery = self._store_of().record(REPORT, owner, self._link.scrub(text.strip()), formatted=False)
        delivery = await self.deliver(delivery)
        if delivery.state != "delivered":
            raise RuntimeError(f"the report was not delivered ({delivery.state}: {delivery.error or 'no detail'})")
        return delivery

