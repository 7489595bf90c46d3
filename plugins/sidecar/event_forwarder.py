"""Turns one turn's loop events into protocol events, in order, after send_message's response.

Every event gains `sessionId` and `turnId`. `step_error` goes out as an `error` event
with `code = step_error:<category>`; a failed turn ends with `session_failed` carrying
the category. Undelivered steers are reported from the turn's result (one
`steer_undelivered` per message, after `turn_finished`), falling back to what the loop
announced when the turn ended by an exception and left no result.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from atomic_agent.plugins.sidecar.protocol_messages import event_message
from atomic_agent.plugins.sidecar.turn_registry import TurnHandle

Send = Callable[[dict[str, Any]], None]
_NOT_FORWARDED = {"loop_failed"}  # session_failed carries the same fact for every failed turn


class TurnForwarder:
    def __init__(self, handle: TurnHandle, send: Send) -> None:
        self._handle = handle
        self._send = send
        self._held: list[dict[str, Any]] | None = []  # None once the response was written
        self._announced_undelivered: list[tuple[str, str]] = []  # (text, steer id or "")
        self.refused: Exception | None = None  # nothing was admitted (a gone steer, bad text, stopping)
        self._finished_seen = False
        self.queued: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    # -- ordering -----------------------------------------------------------------------------
    def open(self) -> None:
        """The send_message response is out: release what the turn emitted meanwhile."""
        held, self._held = self._held or [], None
        for event in held:
            self._send(event_message(event))

    def emit(self, event: dict[str, Any]) -> None:
        event = {**event, "sessionId": self._handle.session_id, "turnId": self._handle.turn_id}
        if self._held is not None:
            self._held.append(event)
        else:
            self._send(event_message(event))

    # -- the loop's events --------------------------------------------------------------------
    def on_loop_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "turn_queued" and not self.queued.done():
            self._handle.ledger_turn_id = event.get("turnId")
            self.queued.set_result(int(event.get("position", 0)))
        elif kind == "turn_finished":
            self._finished_seen = True
        elif kind == "steer_undelivered":
            self._announced_undelivered.append((str(event.get("text", "")), str(event.get("steerId", ""))))
            return  # reported once, from the result, in finish()
        if kind in _NOT_FORWARDED:
            return
        if kind == "step_error":
            event = {"type": "error", "code": event["code"], "message": event.get("message", ""),
                     "category": event["category"], "turnIndex": event.get("turnIndex"), "step": event.get("step")}
            event = {k: v for k, v in event.items() if v is not None}
        self.emit(event)

    # -- the end of the turn ------------------------------------------------------------------
    def finish(self, result: Any) -> None:
        if result.status == "failed" and result.category:
            self.emit({"type": "session_failed", "category": result.category, "message": result.error or result.reason,
                       "turnIndex": result.turn_index})
        if result.status == "interrupted":
            self.emit({"type": "error", "code": "turn_parked", "turnIndex": result.turn_index,
                       "message": "the sidecar is stopping: this turn was interrupted at a step boundary and is "
                                  "answered after the next start (do not send the message again)"})
        self._report_undelivered(result.handed_back(), result.turn_index)

    def parked(self, exc: BaseException) -> None:
        """A graceful stop left the acknowledged turn queued: it is owed, answered after the next start."""
        self.emit({"type": "error", "code": "turn_parked", "message": str(exc)})
        self.emit({"type": "turn_finished", "status": "interrupted", "reason": "parked", "steps": 0,
                   "started": False})
        self._report_undelivered(self._announced_undelivered)

    def finish_without_result(self) -> None:
        self._report_undelivered(self._announced_undelivered)

    def cancelled_before_start(self) -> None:
        self.emit({"type": "turn_finished", "status": "cancelled", "reason": "cancelled", "steps": 0, "started": False})

    def crashed(self, exc: BaseException) -> None:
        self.emit({"type": "error", "code": "turn_crashed", "message": f"{type(exc).__name__}: {exc}"})
        if not self._finished_seen:
            self.emit({"type": "turn_finished", "status": "failed", "reason": "crashed", "steps": 0})
        self._report_undelivered(self._announced_undelivered)

    def _report_undelivered(self, steers: list[tuple[str, str]], turn_index: int | None = None) -> None:
        """One event per steer; `steerId` (when stored) is what send_message's resendSteerId names."""
        where = {} if turn_index is None else {"turnIndex": turn_index}
        for text, steer_id in steers:
            self.emit({"type": "steer_undelivered", "text": text, **where, **({"steerId": steer_id} if steer_id else {})})
