"""The two durable queues of a session — steering and send — as a library over any Store.

A queued message lives under `queue.<session>.<queue>.<order>.<writer>` until it is consumed;
nothing that is not yet part of the conversation reaches the conversation stream.

- **Unique keys across processes and writers.** `<order>` comes from a counter kept *in the
  store* (`queue_seq.<session>.<queue>`) and incremented in the accepting transaction, so a
  restarted process continues after what the store already holds instead of starting at zero;
  `<writer>` names the accepting owner, so two owners can never produce one key; and the key is
  written with write-if-absent, so even a broken counter could not overwrite a message whose
  acceptance was already acknowledged (seed 003's two collision bugs).
- **Consumption is one transaction** that claims (deletes) each queue key and appends the
  message as a user record to the conversation stream: a crash leaves a message in exactly one
  of the two places. A claim that returns nothing means another owner consumed that message;
  it is skipped, so one accepted message is answered once even with two live owners.

Delivery strategies: steering before send; `one-at-a-time` consumes the oldest message,
`all` every pending one. Steering is consumed between inferences; send only when the agent
would otherwise stop (`consume_next(..., would_stop=True)`).
"""

from __future__ import annotations

import enum
import uuid
from collections.abc import Callable
from typing import Any

import attrs

from atomic_agent.persistence.key_space import key_path, key_path_prefix, split_key_path
from atomic_agent.persistence.persistence_errors import PersistenceError, QueueFullError
from atomic_agent.persistence.store_clock import Clock, SystemClock
from atomic_agent.persistence.store_protocol import Store, StoreReader, Transaction

QUEUE_PREFIX = "queue"
COUNTER_PREFIX = "queue_seq"
_ORDER_DIGITS = 12


class QueueName(str, enum.Enum):
    STEERING = "steering"
    SEND = "send"


class DeliveryMode(str, enum.Enum):
    ONE_AT_A_TIME = "one-at-a-time"
    ALL = "all"


@attrs.frozen
class QueuedMessage:
    message_id: str
    session_id: str
    queue: str
    text: str
    origin: str
    accepted_at: float
    writer: str
    order: int
    settings: dict[str, Any] | None = None


@attrs.frozen
class Delivery:
    """What one consumption took: the messages, in queue order, and the seq of the user record
    each became in the conversation stream."""

    queue: str | None
    messages: tuple[QueuedMessage, ...] = ()
    seqs: tuple[int, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.messages)


def conversation_stream(session_id: str) -> str:
    return key_path("conversation", session_id)


def user_record(message: QueuedMessage) -> dict[str, Any]:
    return {"kind": "user", "message_id": message.message_id, "text": message.text, "origin": message.origin,
            "queue": message.queue, "accepted_at": message.accepted_at, "settings": message.settings}


def new_writer_id() -> str:
    return uuid.uuid4().hex[:12]


def _queue(queue: QueueName | str) -> QueueName:
    try:
        return QueueName(queue)
    except ValueError:
        raise ValueError(f"unknown queue {queue!r}; use 'steering' or 'send'") from None


class SessionQueues:
    def __init__(self, writer_id: str | None = None, *, clock: Clock | None = None,
                 stream_for: Callable[[str], str] = conversation_stream,
                 to_record: Callable[[QueuedMessage], Any] = user_record,
                 prefix: str = QUEUE_PREFIX, counter_prefix: str = COUNTER_PREFIX) -> None:
        self.writer_id = writer_id or new_writer_id()
        self.clock = clock or SystemClock()
        self.stream_for = stream_for
        self.to_record = to_record
        self.prefix = prefix
        self.counter_prefix = counter_prefix

    def queue_prefix(self, session_id: str, queue: QueueName | str) -> str:
        return key_path_prefix(self.prefix, session_id, _queue(queue).value)

    def message_key(self, session_id: str, queue: QueueName | str, order: int, writer: str) -> str:
        return key_path(self.prefix, session_id, _queue(queue).value, f"{order:0{_ORDER_DIGITS}d}", writer)

    async def accept(self, tx: Transaction, session_id: str, queue: QueueName | str, text: str, *,
                     origin: str = "cli", settings: dict[str, Any] | None = None, message_id: str | None = None,
                     max_pending: int | None = None) -> QueuedMessage:
        """Queue one message inside `tx`; it is accepted once `tx` commits (use durable=True)."""
        name = _queue(queue)
        if not isinstance(text, str):
            raise ValueError(f"a queued message's text must be a str, got {type(text).__name__}")
        if max_pending is not None:
            waiting = await tx.scan(self.queue_prefix(session_id, name), limit=max_pending)
            if len(waiting) >= max_pending:
                raise QueueFullError(
                    f"the {name.value} queue of session {session_id!r} already holds {len(waiting)} messages, its "
                    "limit; nothing was queued. Wait for the running turn to take them, or send this as a "
                    "follow-up once it ends")
        counter_key = key_path(self.counter_prefix, session_id, name.value)
        order = int(await tx.get(counter_key) or 0) + 1
        await tx.put(counter_key, order)
        message = QueuedMessage(message_id or uuid.uuid4().hex, session_id, name.value, text, origin,
                                self.clock.now(), self.writer_id, order, settings)
        key = self.message_key(session_id, name, order, self.writer_id)
        if not await tx.write_if_absent(key, attrs.asdict(message)):
            raise PersistenceError(f"queue key {key!r} already exists; refusing to overwrite an accepted "
                                   "message (this is a bug: please report it)")
        return message

    async def submit(self, store: Store, session_id: str, queue: QueueName | str, text: str,
                     **options: Any) -> QueuedMessage:
        """Accept one message in its own durable transaction: when this returns it is durable."""
        async with store.transaction(durable=True) as tx:
            return await self.accept(tx, session_id, queue, text, **options)

    async def pending(self, reader: StoreReader, session_id: str, queue: QueueName | str,
                      limit: int | None = None) -> list[QueuedMessage]:
        entries = await reader.scan(self.queue_prefix(session_id, queue), limit=limit)
        return [QueuedMessage(**entry.value) for entry in entries]

    async def consume(self, tx: Transaction, session_id: str, queue: QueueName | str,
                      mode: DeliveryMode | str = DeliveryMode.ONE_AT_A_TIME) -> Delivery:
        """Claim the oldest message (or all) of one queue and append each as a user record, in
        `tx`. Messages another owner claimed first are skipped."""
        name = _queue(queue)
        mode = DeliveryMode(mode)
        limit = 1 if mode is DeliveryMode.ONE_AT_A_TIME else None
        stream = self.stream_for(session_id)
        messages: list[QueuedMessage] = []
        seqs: list[int] = []
        after: str | None = None
        while True:
            entries = await tx.scan(self.queue_prefix(session_id, name), limit=limit, after=after)
            if not entries:
                break
            for entry in entries:
                after = entry.key
                value = await tx.claim(entry.key)
                if value is None:
                    continue
                message = QueuedMessage(**value)
                messages.append(message)
                seqs.append(await tx.append(stream, self.to_record(message)))
            if messages or limit is None:
                break
        return Delivery(name.value if messages else None, tuple(messages), tuple(seqs))

    async def consume_next(self, tx: Transaction, session_id: str, *, would_stop: bool,
                           steering_mode: DeliveryMode | str = DeliveryMode.ONE_AT_A_TIME,
                           send_mode: DeliveryMode | str = DeliveryMode.ONE_AT_A_TIME) -> Delivery:
        """The delivery point between inferences: steering first; send only if the agent would
        otherwise stop. An empty Delivery means nothing is owed."""
        delivery = await self.consume(tx, session_id, QueueName.STEERING, steering_mode)
        if delivery or not would_stop:
            return delivery
        return await self.consume(tx, session_id, QueueName.SEND, send_mode)


def writer_of_key(key: str) -> str:
    """The writer segment of a queue key (its last segment)."""
    return split_key_path(key)[-1]
