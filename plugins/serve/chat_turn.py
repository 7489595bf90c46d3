"""One turn started over HTTP, running as its own task so that no client can stop it.

A client that disconnects mid-stream (or a cancelled request) only stops reading: the
turn still finalizes durably. Its events go to GET /api/events and to the turn's own
queue (read by the streaming response, if any). Undelivered steers are parked in the
server's store on every path — success, failure, exception — and then announced with
their seq.

Nothing is acknowledged before the admission commit: `admitted()` resolves once the
runtime says `turn_queued` (the turn is on disk), or with the reason nothing was admitted
(invalid text, a stopping server, a re-sent steer that is gone, an idempotency key that
already names a turn). Only then does the route answer 200 or open a stream.
"""

from __future__ import annotations

import asyncio
import contextvars
import sys
import time
import uuid
from typing import Any

import attrs

# set inside each turn's task, so an approval asked from deep inside it knows its turn
CURRENT_TURN: contextvars.ContextVar[str | None] = contextvars.ContextVar("serve_turn", default=None)
END = {"type": "__end__"}  # the queue's last item


class ChatTurn:
    def __init__(self, ctx: Any, session_id: str, text: str, *, request_key: Any = None,
                 resend_steer_id: str | None = None, turn_id: str | None = None, client: str | None = None,
                 tool_choice: str | None = None) -> None:
        self.ctx = ctx
        self.session_id = session_id
        self.text = text
        self.client = client  # the X-Atomic-Client that started it: who may answer its approvals
        self.resend_steer_id = resend_steer_id
        self.tool_choice = tool_choice  # the tool the first step must call (checked by the runtime too)
        self.turn_id = turn_id or f"turn_{uuid.uuid4().hex[:16]}"
        if request_key is not None:  # a retry's replay answers with this turn's completion id
            request_key = attrs.evolve(request_key, caller_ref=self.turn_id)
        self.request_key = request_key
        self.ledger_turn_id: str | None = None  # the runtime's id, known once admitted
        self.created = int(time.time())
        self.cancel = asyncio.Event()
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()  # unbounded: a turn never waits for a reader
        self.result: Any = None
        self.crash: BaseException | None = None
        self.not_admitted: BaseException | None = None  # why nothing was admitted (nothing was written)
        self.parked: BaseException | None = None  # TurnParkedError: admitted, owed after the next start
        self.never_started = False
        self.hint: str | None = None
        self.undelivered: list[Any] = []  # ParkedSteer
        self.notices: list[dict[str, str]] = []  # what plugins showed the person as the turn ended (turn_notice)
        self._announced: list[tuple[str, str]] = []  # (text, steer id or "")
        self._admission: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None

    def start(self) -> ChatTurn:
        self.task = asyncio.create_task(self._run(), name=self.turn_id)
        return self

    async def admitted(self) -> bool:
        """True once the turn is durably admitted; False when nothing was (`not_admitted` says why)."""
        return await asyncio.shield(self._admission)

    async def wait(self) -> None:
        """Until the turn is over; cancelling the waiter never cancels the turn."""
        assert self.task is not None
        await asyncio.shield(self.task)

    def push(self, event: dict[str, Any]) -> None:
        self.queue.put_nowait(event)

    def _on_event(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "turn_queued" and not self._admission.done():
            self.ledger_turn_id = str(event.get("turnId") or "") or None
            self._admission.set_result(True)
        event = {**event, "sessionId": self.session_id, "turnId": self.turn_id}
        if kind == "steer_undelivered":
            self._announced.append((str(event.get("text", "")), str(event.get("steerId", ""))))
            return  # announced with its parked seq once the turn is over
        if kind == "llm_unavailable":
            self.hint = str(event.get("hint") or "")
        if kind == "turn_notice":
            self.notices.append({"source": str(event.get("source", "")), "text": str(event.get("text", ""))})
        self.ctx.emit_event(event, self.turn_id)

    async def _run(self) -> None:
        from atomic_agent.api import (
            DuplicateRequestError,
            InvalidTextError,
            RuntimeStoppingError,
            SessionStoreError,
            SteerAlreadyTakenError,
            SubmissionCancelledError,
            TurnParkedError,
            UnknownToolChoiceError,
        )

        CURRENT_TURN.set(self.turn_id)
        try:
            self.result = await self.ctx.runtime.run_turn(self.text, session_id=self.session_id,
                                                          on_event=self._on_event, cancelled=self.cancel,
                                                          origin="http", request_key=self.request_key,
                                                          resend_steer_id=self.resend_steer_id,
                                                          tool_choice=self.tool_choice)
        except (InvalidTextError, RuntimeStoppingError, SteerAlreadyTakenError, DuplicateRequestError,
                UnknownToolChoiceError) as exc:
            self.not_admitted = exc  # refused before the admission commit: nothing was written
        except TurnParkedError as exc:
            self.parked = exc
            self._park(self._announced, None)
        except SubmissionCancelledError:
            self.never_started = True
        except asyncio.CancelledError:
            self._park(self._announced, None)
            raise
        except SessionStoreError as exc:
            if self._admission.done():  # admitted and acknowledged: the turn crashed mid-way
                self._crashed(exc)
            else:  # the store failed before the admission committed: nothing to acknowledge
                self.not_admitted = exc
        except Exception as exc:
            self._crashed(exc)
        else:
            self._park(self.result.handed_back(), self.result.turn_index)
        finally:
            if not self._admission.done():
                self._admission.set_result(False)
            self.push(END)
            self.ctx.turns.pop(self.turn_id, None)

    def _crashed(self, exc: Exception) -> None:
        print(f"atomic-agent serve: turn {self.turn_id} crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
        self.crash = exc
        self._park(self._announced, None)

    def _park(self, steers: list[tuple[str, str]], turn_index: int | None) -> None:
        self.undelivered = self.ctx.parked.park(self.session_id, [t for t, _ in steers], turn_index,
                                                [i for _, i in steers])
        for parked in self.undelivered:
            self.ctx.emit_event({"type": "steer_undelivered", "sessionId": self.session_id, "turnId": self.turn_id,
                           **parked.view()}, self.turn_id)
