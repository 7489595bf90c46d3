"""Approvals of the Telegram session on inline buttons in the owner's DM.

The gate routes the channel session's requests here (`ApprovalGate.route_session`). Each
request becomes a plain-text message with ✅ Approve / ❌ Deny buttons; the callback's user
must be the live owner (a previous owner's click is refused); after `timeout_s` the
request is denied and the message edited. A click, the timeout and a cancel (the turn was
stopped) each try to resolve the same pending entry; only the first one does.
Telegram never grants: a button approves this one call.

What became of each prompt is kept in telegram.sqlite (`approval_requests`), so a button
pressed later — even after a restart — is told what happened: answered by the owner, timed
out, cancelled, denied when the agent stopped, or expired because the agent restarted before
anyone answered. It never says "already answered" for a request nobody answered.
"""

from __future__ import annotations

import asyncio
import secrets
import sys
from collections.abc import Callable
from typing import Any

import attrs

from .bot_api import BotApi, BotApiError
from .channel_metrics import ChannelMetrics
from .outbound_sender import OutboundSender

APPROVE, DENY = "y", "n"
CALLBACK_PREFIX = "ap"
APPROVED_TEXT = "✅ approved"
DENIED_TEXT = "❌ denied"
TIMED_OUT_TEXT = "⏱ timed out — auto-denied"
CANCELLED_TEXT = "✖ cancelled — the turn ended before an answer"
NO_OWNER = "no_owner"
SEND_GRACE_S = 10.0  # how long a cancelled turn lets its prompt's send finish, to close it
SETTLED_KEPT = 512  # prompts settled in this process whose fate is remembered without the journal
OPEN, APPROVED, DENIED = "open", "approved", "denied"
UNKNOWN_TEXT = ("This request expired: it was asked before the agent restarted (or too long ago to remember), "
                "and nothing was approved. Ask again if it is still needed.")
STALE_TEXTS = {
    "timeout": "This request expired: nobody answered in time, so it was denied.",
    "cancel": "This request was cancelled: the turn ended before an answer.",
    "owner_changed": "This request was denied when the bot's owner changed.",
    "channel_stopped": "This request expired: the agent stopped before it was answered, so it was denied.",
    "send_failed": "This request expired: its prompt could not be delivered, so it was denied.",
}
RESTARTED_TEXT = ("This request expired: the agent restarted before it was answered, so it was denied. "
                  "Ask again if it is still needed.")


def stale_text(state: str | None, resolver: str | None) -> str:
    """What a button pressed on a request that is no longer open is told."""
    if state is None:
        return UNKNOWN_TEXT
    if resolver == "button":
        return f"Already answered: {'approved' if state == APPROVED else 'denied'} by the owner."
    if state == OPEN:  # the process that asked it died before anything settled it
        return RESTARTED_TEXT
    return STALE_TEXTS.get(resolver or "", "This request expired and was denied.")


@attrs.define
class PendingApproval:
    future: asyncio.Future[bool]
    text: str
    chat_id: int
    message_id: int = 0
    late_edit: str | None = None  # resolved before the prompt's send answered: edit once it has an id


def keyboard(token: str) -> dict[str, Any]:
    return {"inline_keyboard": [[{"text": "✅ Approve", "callback_data": f"{CALLBACK_PREFIX}:{token}:{APPROVE}"},
                                 {"text": "❌ Deny", "callback_data": f"{CALLBACK_PREFIX}:{token}:{DENY}"}]]}


def request_text(request: Any) -> str:
    lines = [f"Approval needed · {request.label or request.category}", f"{request.tool}: {request.summary}"]
    if request.note:
        lines.append(f"({request.note})")
    return "\n".join(lines)


QUESTION_PREFIX = "q"  # q:<question record id>:<option id>


def question_keyboard(approval_id: str, question: dict[str, Any]) -> dict[str, Any]:
    return {"inline_keyboard": [[{"text": str(o.get("label") or o["id"]),
                                  "callback_data": f"{QUESTION_PREFIX}:{approval_id}:{o['id']}"}]
                                for o in question.get("options", [])]}


def question_text(question: dict[str, Any]) -> str:
    lines = [f"Question · {question.get('reason', '')}", str(question.get("prompt", ""))]
    if question.get("allowFreeText"):
        lines.append("(or answer in words: atomic-agent approvals answer ID text --text ...)")
    return "\n".join(lines)


class ApprovalBridge:
    shows_questions = True  # the gate shows ask_user questions here: option buttons

    def __init__(self, api_of: Callable[[], BotApi | None], owner_of: Callable[[], int | None],
                 sender_of: Callable[[], OutboundSender], metrics: ChannelMetrics,
                 timeout_s: Callable[[], float], journal_of: Callable[[], Any] | None = None,
                 records_of: Callable[[], Any] | None = None) -> None:
        self._records_of = records_of  # the gate's durable approval records (questions are answered there)
        self._questions: dict[str, PendingApproval] = {}
        self._api_of = api_of
        self._journal_of = journal_of  # the DeliveryStore, whose approval_* methods keep each prompt's fate
        self._settled: dict[str, tuple[str, str]] = {}
        self._owner_of = owner_of
        self._sender_of = sender_of
        self._metrics = metrics
        self._timeout_s = timeout_s
        self.pending: dict[str, PendingApproval] = {}

    async def ask(self, request: Any) -> bool:
        """The gate's host for the Telegram session: True only on the owner's Approve click."""
        owner, api = self._owner_of(), self._api_of()
        if owner is None or api is None:
            self._resolved("nobody", False)
            return False  # nobody to ask: the answer is no
        if getattr(request, "question", None) is not None and request.approval_id:
            return await self._ask_question(request, owner, api)
        token = secrets.token_urlsafe(9)
        text = request_text(request)
        entry = PendingApproval(asyncio.get_running_loop().create_future(), text, owner)
        self.pending[token] = entry
        self._journal("approval_opened", token, owner)
        try:
            if not await self._send_prompt(token, entry, api):
                return False
            try:
                return await asyncio.wait_for(asyncio.shield(entry.future), self._timeout_s())
            except asyncio.TimeoutError:
                if self._resolve(token, False, "timeout"):
                    # the durable record says expired (nobody answered), not that the owner denied it
                    records = self._records_of() if self._records_of is not None else None
                    if records is not None and getattr(request, "approval_id", None):
                        records.expire(request.approval_id)
                    await asyncio.shield(self._edit(entry, TIMED_OUT_TEXT))
                return entry.future.result() if entry.future.done() else False
        except asyncio.CancelledError:  # the turn was stopped while it waited
            if self._resolve(token, False, "cancel"):
                await asyncio.shield(self._edit(entry, CANCELLED_TEXT))
            raise
        finally:
            self.pending.pop(token, None)

    async def _ask_question(self, request: Any, owner: int, api: BotApi) -> bool:
        """Show an ask_user question as option buttons; the record holds the answer (committed
        by `on_callback`, or by any other surface, which the gate notices and withdraws this)."""
        entry = PendingApproval(asyncio.get_running_loop().create_future(), question_text(request.question), owner)
        self._questions[request.approval_id] = entry
        try:
            ids = await self._sender_of().send_plain(api, owner, entry.text,
                                                     reply_markup=question_keyboard(request.approval_id,
                                                                                    request.question))
            entry.message_id = ids[-1] if ids else 0
            return await asyncio.wait_for(asyncio.shield(entry.future), self._timeout_s())
        except BotApiError as exc:
            print(f"atomic-agent: telegram question not sent: {exc}", file=sys.stderr)
            await asyncio.Event().wait()  # unsent here: another surface (or expiry) settles the record
            return False
        except asyncio.TimeoutError:
            records = self._records_of() if self._records_of is not None else None
            if records is not None:
                records.expire(request.approval_id)
            await self._edit(entry, f"{entry.text}\n\n{TIMED_OUT_TEXT}")
            return False
        finally:
            self._questions.pop(request.approval_id, None)

    async def _on_question(self, api: BotApi | None, query_id: str, parts: list[str]) -> str:
        """An option button: the first answer from any surface wins; a late or forged one is told."""
        records = self._records_of() if self._records_of is not None else None
        approval_id, option = parts[1], parts[2]
        if records is None:
            await self._answer(api, query_id, "Unknown button.")
            return "malformed"
        try:
            record = records.answer(approval_id, option, principal="operator", surface="telegram")
        except Exception as exc:  # the records' refusals carry a `code` and a `message` for the person
            code, message = getattr(exc, "code", None), getattr(exc, "message", None)
            if code is None or message is None:
                raise
            await self._answer(api, query_id, message[:190])
            return "stale" if code in ("approval_already_answered", "approval_expired") else "refused"
        entry = self._questions.get(approval_id)
        label = next((o.get("label") for o in (record.question or {}).get("options", []) if o["id"] == option),
                     option)
        await self._answer(api, query_id, f"Answered: {label}")
        if entry is not None:
            if not entry.future.done():
                entry.future.set_result(True)
            await self._edit(entry, f"{entry.text}\n\n✅ {label}")
        return "answered"

    async def _send_prompt(self, token: str, entry: PendingApproval, api: BotApi) -> bool:
        """Send the keyboard; False (denied) when it could not be sent. A cancel that lands
        while the send is in flight lets the send finish, so the prompt can still be closed."""
        send = asyncio.ensure_future(self._sender_of().send_plain(api, entry.chat_id, entry.text,
                                                                  reply_markup=keyboard(token)))
        try:
            ids = await asyncio.shield(send)
        except asyncio.CancelledError:
            self._resolve(token, False, "cancel")
            try:
                entry.message_id = (await asyncio.wait_for(send, SEND_GRACE_S) or [0])[-1]
                await asyncio.shield(self._edit(entry, entry.late_edit or CANCELLED_TEXT))
            except (BotApiError, asyncio.TimeoutError):
                pass
            raise
        except BotApiError as exc:
            print(f"atomic-agent: telegram approval prompt not sent: {exc}", file=sys.stderr)
            self._resolve(token, False, "send_failed")
            return False
        entry.message_id = ids[-1] if ids else 0
        if entry.late_edit is not None:  # a /cancel or an owner change got there first
            await asyncio.shield(self._edit(entry, entry.late_edit))  # a stop of the turn must not cut it off
        return True

    def _resolve(self, token: str, approved: bool, resolver: str) -> bool:
        """Resolve once; False when someone else already did."""
        entry = self.pending.get(token)
        if entry is None or entry.future.done():
            return False
        entry.future.set_result(approved)
        self._resolved(resolver, approved)
        state = APPROVED if approved else DENIED
        self._settled[token] = (state, resolver)
        while len(self._settled) > SETTLED_KEPT:
            self._settled.pop(next(iter(self._settled)))
        self._journal("approval_settled", token, state, resolver)
        return True

    def _journal(self, method: str, *args: Any) -> Any:
        """Keep a prompt's fate; a journal that cannot be written never blocks an approval."""
        store = self._journal_of() if self._journal_of is not None else None
        if store is None:
            return None
        try:
            return getattr(store, method)(*args)
        except Exception as exc:  # a full disk or a locked file: the answer still counts
            print(f"atomic-agent: telegram approval journal: {method} failed: {exc}", file=sys.stderr)
            return None

    def outcome_of(self, token: str) -> tuple[str | None, str | None]:
        """(state, resolver) of a request that is not pending here; (None, None) when unknown."""
        if token in self._settled:
            return self._settled[token]
        found = self._journal("approval_outcome", token)
        return (found[0], found[1]) if found else (None, None)

    def _resolved(self, resolver: str, approved: bool) -> None:
        self._metrics.inc("approvals_resolved", resolver=resolver, approved=str(approved).lower())

    async def on_callback(self, callback: dict[str, Any]) -> str:
        """Handle a button press; returns what happened (for status and tests)."""
        api = self._api_of()
        query_id = str(callback.get("id", ""))
        sender = raw_sender if isinstance(raw_sender := callback.get("from"), dict) else {}
        data = raw_data if isinstance(raw_data := callback.get("data"), str) else ""
        parts = data.split(":")
        if sender.get("id") != self._owner_of() or self._owner_of() is None:
            await self._answer(api, query_id, "Only the owner can answer approvals.")
            return "refused_not_owner"
        if len(parts) == 3 and parts[0] == QUESTION_PREFIX:
            return await self._on_question(api, query_id, parts)
        if len(parts) != 3 or parts[0] != CALLBACK_PREFIX or parts[2] not in (APPROVE, DENY):
            await self._answer(api, query_id, "Unknown button.")
            return "malformed"
        token, approved = parts[1], parts[2] == APPROVE
        entry = self.pending.get(token)
        if entry is None or not self._resolve(token, approved, "button"):
            state, resolver = self.outcome_of(token)
            text = stale_text(state, resolver)
            await self._answer(api, query_id, text)
            if entry is None and token not in self._settled:  # an earlier process's prompt: close its buttons
                await self._close_stale(api, callback, text)
            return "stale" if resolver == "button" else "expired"
        await self._answer(api, query_id, "Approved." if approved else "Denied.")
        await self._edit(entry, f"{entry.text}\n\n{APPROVED_TEXT if approved else DENIED_TEXT}")
        return "approved" if approved else "denied"

    async def cancel_all(self) -> int:
        """/cancel: every open request is denied and its message says so."""
        entries = [(token, self.pending[token]) for token in list(self.pending)]
        cancelled = [entry for token, entry in entries if self._resolve(token, False, "cancel")]
        for entry in cancelled:
            await self._edit(entry, f"{entry.text}\n\n{CANCELLED_TEXT}")
        return len(cancelled)

    def deny_all(self, resolver: str = "channel_stopped") -> int:
        """The channel stops: every open request is denied (the turns go on without it)."""
        return sum(self._resolve(token, False, resolver) for token in list(self.pending))

    async def _close_stale(self, api: BotApi | None, callback: dict[str, Any], text: str) -> None:
        raw_message = callback.get("message")
        message: dict[str, Any] = raw_message if isinstance(raw_message, dict) else {}
        raw_chat = message.get("chat")
        chat: dict[str, Any] = raw_chat if isinstance(raw_chat, dict) else {}
        message_id, chat_id = message.get("message_id"), chat.get("id")
        if api is None or not isinstance(message_id, int) or not message_id or not isinstance(chat_id, int):
            return
        original = message.get("text") if isinstance(message.get("text"), str) else ""
        try:
            await api.edit_message_text(chat_id, message_id, f"{original}\n\n{text}".strip())
        except BotApiError:
            pass

    async def _answer(self, api: BotApi | None, query_id: str, text: str) -> None:
        if api is None or not query_id:
            return
        try:
            await api.answer_callback_query(query_id, text)
        except BotApiError:
            pass

    async def _edit(self, entry: PendingApproval, text: str) -> None:
        api = self._api_of()
        if not entry.message_id:
            entry.late_edit = text
            return
        if api is None:
            return
        try:
            await api.edit_message_text(entry.chat_id, entry.message_id, text)
        except BotApiError as exc:
            print(f"atomic-agent: telegram approval message not edited: {exc}", file=sys.stderr)
