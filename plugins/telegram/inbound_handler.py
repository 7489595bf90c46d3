"""One Telegram update, handled: pairing, the owner check, slash commands, steers, turns.

Every message becomes `runtime.run_turn(..., origin="telegram")` on the channel's own
session, or a steer of the turn running there; nothing here writes to the session store,
the gate or the turn controller directly. An update is confirmed (`UpdateOffsets.settle`)
only once what it asked for is durable: the turn's admission (and its reply obligation),
the steer, the command. A turn's admission carries the update as its idempotency key, so an
update Telegram hands out again after a crash finds its turn instead of running twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import TYPE_CHECKING, Any

from .delivery_store import Delivery
from .reply_text import from_result

if TYPE_CHECKING:
    from .telegram_channel import TelegramChannel

MAX_INBOUND_CHARS = 32 * 1024
RESEND_ATTEMPTS = 4  # a handed-back steer's re-send refused by a busy store is tried this often
RESEND_BACKOFF_S = 0.25
HELP_TEXT = ("Commands:\n/help — this list\n/status — what the agent is doing\n"
             "/new — start a new conversation\n/cancel — stop the running turn\n"
             "Anything else is a message to the agent; sent while a turn runs, it steers that turn.")
COMMANDS = (("help", "what the bot understands"), ("status", "what the agent is doing"),
            ("new", "start a new conversation"), ("cancel", "stop the running turn"))


def _command(text: str) -> str | None:
    if not text.startswith("/"):
        return None
    head = text.split(maxsplit=1)[0][1:]
    return head.split("@", 1)[0].lower()


class InboundHandler:
    def __init__(self, channel: TelegramChannel) -> None:
        self.channel = channel

    async def handle(self, update: dict[str, Any]) -> str:
        """Handle one update; returns what became of it (for logs and tests)."""
        update_id = update["update_id"]
        ch = self.channel
        try:
            if ch.store.was_handled(ch.bot_key, update_id):
                ch.offsets.settle(update_id)
                return "duplicate"
            if isinstance(update.get("callback_query"), dict):
                outcome = await ch.bridge.on_callback(update["callback_query"])
                ch.offsets.settle(update_id)
                return outcome
            message = update.get("message")
            if not isinstance(message, dict):
                return self._ignore(update_id, "malformed")
            return await self._message(update_id, message)
        except Exception as exc:  # a bug or a broken store: say so on both ends, never silently
            why = ch.scrub(f"{type(exc).__name__}: {exc}")
            print(f"atomic-agent: telegram update {update_id} failed: {why}", file=sys.stderr)
            with contextlib.suppress(Exception):
                ch.store.mark_handled(ch.bot_key, update_id, "error")
            ch.offsets.settle(update_id)
            chat = update.get("message", {}).get("chat", {}) if isinstance(update.get("message"), dict) else {}
            if isinstance(chat, dict) and chat.get("id") == ch.owner_user_id and ch.owner_user_id is not None:
                await ch.send_notice(ch.owner_user_id, f"That message could not be handled ({why}). "
                                                       "Check /status before sending it again.")
            return "error"

    def _ignore(self, update_id: int, why: str) -> str:
        self.channel.metrics.inc("ignored", reason=why)
        self.channel.store.mark_handled(self.channel.bot_key, update_id, f"ignored:{why}")
        self.channel.offsets.settle(update_id)
        return f"ignored:{why}"

    async def _message(self, update_id: int, message: dict[str, Any]) -> str:
        ch = self.channel
        sender = message.get("from")
        chat = message.get("chat")
        if not isinstance(sender, dict) or not isinstance(chat, dict) or not isinstance(sender.get("id"), int) \
                or not isinstance(chat.get("id"), int):
            return self._ignore(update_id, "malformed")
        user_id, chat_id = sender["id"], chat["id"]
        private = chat.get("type") == "private"
        if private and ch.owner_user_id != user_id and ch.pairing_open():
            await ch.claim_owner(user_id)  # pairing bypasses the owner check (and only pairing does)
            await self._plain(chat_id, "Paired: you own this agent now. Send /help to see what I understand.")
            return self._done(update_id, "paired")
        if ch.owner_user_id is None or user_id != ch.owner_user_id or not private:
            return self._ignore(update_id, "not_owner")
        text = message.get("text")
        if not isinstance(text, str):
            await self._plain(chat_id, "Only text messages are understood.")
            return self._ignore(update_id, "not_text")
        if len(text) > MAX_INBOUND_CHARS:
            await self._plain(chat_id, f"That message is too long ({len(text)} characters; at most "
                                       f"{MAX_INBOUND_CHARS}). Nothing was sent to the agent.")
            return self._ignore(update_id, "too_long")
        command = _command(text)
        if command is not None:
            return await self._slash(update_id, chat_id, command)
        return await self._to_agent(update_id, chat_id, text)

    def _request_key(self, update_id: int, text: str) -> Any:
        """The idempotency key an update's turn (or steer) is committed under: a redelivery finds it."""
        from atomic_agent.api import RequestKey

        key = f"telegram:{self.channel.bot_id}:{update_id}"
        return RequestKey.of(key, "telegram", update_id, text)

    def _owe_reply(self, turn_id: str, session_id: str, chat_id: int, update_id: int | None) -> None:
        """A turn admitted before a crash: record its reply as owed (once) and let the owed
        sender deliver it when the turn has answered; the update is handled."""
        self.channel.store.open_reply(turn_id, chat_id, session_id)
        if update_id is not None:
            self._done(update_id, "turn")
        self.channel.wake_owed()

    def _done(self, update_id: int, outcome: str) -> str:
        self.channel.store.mark_handled(self.channel.bot_key, update_id, outcome)
        self.channel.offsets.settle(update_id)
        return outcome

    async def _plain(self, chat_id: int, text: str) -> None:
        await self.channel.send_notice(chat_id, text)

    # -- slash commands -------------------------------------------------------------------------
    async def _slash(self, update_id: int, chat_id: int, command: str) -> str:
        ch = self.channel
        if command in ("help", "start"):
            reply = HELP_TEXT
        elif command == "status":
            reply = ch.status_text()
        elif command == "new":
            old = ch.session_id()
            new = ch.rotate_session()
            reply = f"New conversation started ({new}). The previous one ({old}) is kept."
        elif command == "cancel":
            stopped = ch.runtime.stop(ch.session_id())
            cancelled = await ch.bridge.cancel_all()
            reply = "Stopping the running turn." if stopped else "Nothing is running."
            if cancelled:
                reply += f" {cancelled} open approval(s) cancelled."
        else:
            reply = f"Unknown command /{command}. Send /help for the list."
        self._done(update_id, f"command:{command}")
        await self._plain(chat_id, reply)
        return f"command:{command}"

    # -- messages to the agent ----------------------------------------------------------------
    async def _to_agent(self, update_id: int, chat_id: int, text: str) -> str:
        from atomic_agent.api import SteerOutcome, text_problem

        ch = self.channel
        problem = text_problem(text)
        if problem is not None:
            await self._plain(chat_id, f"That message cannot be read ({problem}); nothing was sent to the agent.")
            return self._ignore(update_id, "invalid_text")
        ch.metrics.inc("messages_received")
        session_id = ch.session_id()
        key = self._request_key(update_id, text)
        existing = ch.runtime.turn_for_key(key.key)
        if existing is None:
            # the steer commits the update's key with it: a crash before the update is marked
            # handled brings it back, and it then finds the turn instead of steering twice
            outcome = ch.runtime.steer(session_id, text, request_key=key)
            if outcome is SteerOutcome.ACCEPTED:
                self._done(update_id, "steer")
                return "steer"
            if outcome is SteerOutcome.DUPLICATE:
                existing = ch.runtime.turn_for_key(key.key)
        if existing is not None:  # redelivered after a crash: never steered again, the turn's reply is owed
            self._owe_reply(existing.turn_id, existing.session_id, chat_id, update_id)
            return "turn"
        await self.run_turn(chat_id, session_id, text, update_id=update_id)
        return "turn"

    async def _resend_in_order(self, chat_id: int, session_id: str, steers: list[tuple[str, str]]) -> None:
        """Re-send handed-back steers one at a time, each after the previous one's admission:
        sent together, a refused first one (the store was busy) would be admitted after the
        second. A refusal is retried a few times; if the store keeps refusing, the rest stay
        queued on disk and the next start re-sends them, still in order."""
        for index, (steer_text, steer_id) in enumerate(steers):
            for attempt in range(RESEND_ATTEMPTS):
                admitted = asyncio.Event()
                turn = self.channel.spawn(self.run_turn(chat_id, session_id, steer_text,
                                                        resend_steer_id=steer_id or None, admitted=admitted))
                waiter = asyncio.ensure_future(admitted.wait())
                await asyncio.wait({turn, waiter}, return_when=asyncio.FIRST_COMPLETED)
                waiter.cancel()
                if admitted.is_set() or (turn.done() and not turn.cancelled() and turn.exception() is None):
                    break  # admitted (or settled without a turn: merged, taken, parked)
                if attempt + 1 < RESEND_ATTEMPTS:
                    await asyncio.sleep(RESEND_BACKOFF_S * (attempt + 1))
            else:
                print(f"atomic-agent: telegram could not re-send {len(steers) - index} handed-back message(s) now; "
                      "they stay queued and the next start sends them", file=sys.stderr)
                return

    async def run_turn(self, chat_id: int, session_id: str, text: str, *, update_id: int | None = None,
                       resend_steer_id: str | None = None, admitted: asyncio.Event | None = None) -> None:
        """Run one turn for the owner and deliver its reply; hands-back are re-sent as turns.

        `admitted` is set once the turn's admission is on disk (or the turn ended without one)."""
        from atomic_agent.api import (
            DuplicateRequestError,
            RuntimeStoppingError,
            SteerAlreadyTakenError,
            TurnParkedError,
        )

        ch = self.channel
        obligation: list[Delivery] = []
        notices: list[str] = []  # what plugins show the person as the turn ends (a worktree's diffstat)

        def on_event(event: dict[str, Any]) -> None:
            if event.get("type") == "turn_notice":
                notices.append(str(event.get("text", "")))
            if event.get("type") == "turn_queued":  # the admission is on disk
                obligation.append(ch.store.open_reply(event["turnId"], chat_id, session_id))
                if update_id is not None:
                    self._done(update_id, "turn")
                if admitted is not None:
                    admitted.set()

        key = self._request_key(update_id, text) if update_id is not None else None
        try:
            result = await ch.runtime.run_turn(text, session_id, on_event, origin="telegram", request_key=key,
                                               resend_steer_id=resend_steer_id)
        except DuplicateRequestError as dup:  # admitted before a crash: its reply is owed, not a rerun
            self._owe_reply(dup.existing.turn_id, dup.existing.session_id, chat_id, update_id)
            return
        except (TurnParkedError, RuntimeStoppingError):
            return  # parked or refused by a stopping runtime: the next start answers it
        except SteerAlreadyTakenError:
            return
        handed_back = result.handed_back()
        if handed_back:  # steers the turn ended without: never lost, and re-sent in the order they came
            ch.spawn(self._resend_in_order(chat_id, session_id, list(handed_back)))
        if not obligation:
            return
        if result.state == "merged" and result.merged_into and ch.store.for_turn(result.merged_into) is not None:
            ch.store.drop_merged(obligation[0].id)  # the merging turn's reply answers this message too
            return
        reply = from_result(result)
        if reply is None:
            return  # parked: owed until the continuation answers
        delivery = ch.store.set_body(obligation[0].id, reply.body, reply.formatted)
        await ch.deliver(delivery)
        for notice in notices:  # after the reply, plain and not durable (like the channel's own notices)
            await self._plain(chat_id, notice)
