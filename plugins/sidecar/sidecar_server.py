"""One sidecar conversation: reads requests, answers each once, forwards turn events.

Requests are handled one at a time in arrival order (every handler is quick: a turn is
started in the background and answered as soon as it is queued — never before its
admission is on disk). Stopping — a `shutdown` request, end of input, SIGTERM or SIGINT —
is graceful: it stops reading, lets each running turn finish its step within
`sidecar.shutdownGraceS` and parks it at the boundary (interrupted), leaves queued turns
queued (their hosts hear `turn_parked`), denies pending approvals and closes the runtime.
The next start answers every parked message exactly once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from atomic_agent.api import PendingApprovals, RuntimeHost
from atomic_agent.plugins.sidecar.event_forwarder import TurnForwarder
from atomic_agent.plugins.sidecar.line_reader import EndOfInput, Item
from atomic_agent.plugins.sidecar.protocol_messages import event_message
from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
from atomic_agent.plugins.sidecar.turn_registry import CURRENT_TURN, TurnHandle, TurnRegistry, new_turn_id

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


@attrs.frozen
class SidecarLimits:
    max_line_bytes: int = 4 * 1024 * 1024
    approval_timeout_s: float = 480.0
    shutdown_grace_s: float = 10.0


DEFAULT_LIMITS = SidecarLimits()


def not_admitted(exc: BaseException | None) -> Exception:
    """The protocol error for a send_message whose turn was never admitted (nothing written)."""
    from atomic_agent.api import InvalidTextError, RuntimeStoppingError, SteerAlreadyTakenError
    from atomic_agent.plugins.sidecar.protocol_messages import ProtocolError

    if isinstance(exc, SteerAlreadyTakenError):
        return ProtocolError("steer_not_queued", str(exc))
    if isinstance(exc, InvalidTextError):
        return ProtocolError("invalid_text", str(exc))
    if isinstance(exc, RuntimeStoppingError):
        return ProtocolError("shutting_down", str(exc))
    what = f"{type(exc).__name__}: {exc}" if exc is not None else "it ended before it was queued"
    return ProtocolError("turn_not_admitted", f"the message was not accepted, nothing was written ({what}); "
                         "it is safe to send it again")


class LineSource(Protocol):
    """What `run` reads from (FdLineSource in production)."""

    async def next(self) -> Item: ...


class SidecarServer(RuntimeHost):
    def __init__(self, writer: ProtocolWriter, limits: SidecarLimits = DEFAULT_LIMITS,
                 working_dir: Path | None = None) -> None:
        self.writer = writer
        self.limits = limits
        self.working_dir = working_dir or Path.cwd()
        self.registry = TurnRegistry()
        # the host is the person at this machine: grants allowed; the schema wants no null ids
        self.approvals = PendingApprovals(self.emit_event, limits.approval_timeout_s, CURRENT_TURN.get,
                                          grants_allowed=True, omit_null_ids=True)
        # ask_user questions go out as question_request events (answered by question_response)
        self.approvals.surface = "sidecar"
        self._questions: set[str] = set()  # approval ids of the questions shown here
        self.closing = False
        self._forwarders: dict[str, TurnForwarder] = {}
        self._after_response: list[Callable[[], None]] = []
        self._stop = asyncio.Event()

    @property
    def tracing(self) -> bool:
        return bool(self.runtime.config.tracing.enabled)

    def set_tracing(self, enabled: bool) -> None:
        """The host's opt-in (or out) for per-session traces, applied to turns from now on."""
        self.runtime.set_tracing(enabled)

    # -- output ----------------------------------------------------------------------------
    def send(self, message: dict[str, Any]) -> None:
        self.writer.send(message)

    def bind(self, runtime: RuntimeView) -> None:
        super().bind(runtime)
        # answers commit to the gate's durable records, shared by every process on the state dir:
        # the first answer from any surface wins, and records raised elsewhere are answered here too
        gate = runtime.gate
        self.approvals.records = gate.records
        gate.surface = "sidecar"
        gate.record_ttl_s = self.limits.approval_timeout_s

    def emit_event(self, event: dict[str, Any], turn_id: str | None = None) -> None:
        """An event outside the loop's own stream (approvals): kept in order with its turn's events."""
        event = self._question_event(event)
        forwarder = self._forwarders.get(turn_id) if turn_id else None
        if forwarder is not None:
            forwarder.emit(event)
        else:
            self.send(event_message(event))

    def _question_event(self, event: dict[str, Any]) -> dict[str, Any]:
        """An ask_user question travels as question_request / question_resolved (its answer is
        an option id or text, not an approval decision)."""
        approval_id = str(event.get("approvalId", ""))
        if event.get("type") == "approval_request" and event.get("kind") == "question":
            self._questions.add(approval_id)
            return {k: v for k, v in {
                "type": "question_request", "approvalId": approval_id, "sessionId": event.get("sessionId"),
                "turnId": event.get("turnId"), "tool": event.get("tool"), "question": event.get("question"),
                "timeoutS": event.get("timeoutS")}.items() if v is not None}
        if event.get("type") == "approval_resolved" and approval_id in self._questions:
            self._questions.discard(approval_id)
            record = self.approvals.record_for(approval_id)
            resolved: dict[str, Any] = {"type": "question_resolved", "approvalId": approval_id,
                                        "sessionId": event.get("sessionId"), "outcome": event.get("outcome")}
            if event.get("turnId") is not None:
                resolved["turnId"] = event["turnId"]
            if record is not None:
                resolved["state"] = record.state
                for key, value in (("option", record.decision if record.decision != "text" else None),
                                   ("text", record.answer_text if record.decision == "text" else None),
                                   ("answeredBy", record.answered_by), ("surface", record.surface)):
                    if value is not None:
                        resolved[key] = value
            return resolved
        return event

    def after_response(self, callback: Callable[[], None]) -> None:
        self._after_response.append(callback)

    def run_after_response(self) -> None:
        callbacks, self._after_response = self._after_response, []
        for callback in callbacks:
            callback()

    # -- turns -----------------------------------------------------------------------------
    async def start_turn(self, session_id: str, text: str, resend_steer_id: str | None = None) -> tuple[str, int]:
        """Queue a turn in the background; returns its id and queue position once it is queued.
        A re-send of a handed-back steer that is no longer stored is refused (steer_not_queued)."""
        handle = TurnHandle(new_turn_id(), session_id, asyncio.Event())
        forwarder = TurnForwarder(handle, self.send)
        self._forwarders[handle.turn_id] = forwarder
        self.registry.add(handle)
        handle.task = asyncio.create_task(self._run_turn(handle, forwarder, text, resend_steer_id), name=handle.turn_id)
        first: set[asyncio.Future[Any]] = {forwarder.queued, handle.task}
        await asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED)
        if not forwarder.queued.done():  # the task ended before the admission commit: nothing to acknowledge
            raise not_admitted(forwarder.refused)
        position = forwarder.queued.result()
        self.after_response(forwarder.open)
        return handle.turn_id, position

    async def _run_turn(self, handle: TurnHandle, forwarder: TurnForwarder, text: str,
                        resend_steer_id: str | None = None) -> None:
        from atomic_agent.api import (
            InvalidTextError,
            RuntimeStoppingError,
            SteerAlreadyTakenError,
            SubmissionCancelledError,
            TurnParkedError,
        )

        CURRENT_TURN.set(handle.turn_id)
        try:
            result = await self.runtime.run_turn(text, session_id=handle.session_id, on_event=forwarder.on_loop_event,
                                                 cancelled=handle.cancel, origin="sidecar",
                                                 resend_steer_id=resend_steer_id)
        except (SteerAlreadyTakenError, InvalidTextError, RuntimeStoppingError) as exc:
            forwarder.refused = exc  # nothing was admitted: send_message answers the error
        except TurnParkedError as exc:
            forwarder.parked(exc)
        except SubmissionCancelledError:
            forwarder.cancelled_before_start()
        except asyncio.CancelledError:
            forwarder.finish_without_result()
            raise
        except Exception as exc:
            print(f"atomic-agent sidecar: turn {handle.turn_id} crashed: {type(exc).__name__}: {exc}", file=sys.stderr)
            if forwarder.queued.done():
                forwarder.crashed(exc)
            else:
                forwarder.refused = exc  # it died before the admission commit: refused, never acknowledged
        else:
            forwarder.finish(result)
        finally:
            self.registry.remove(handle.turn_id)
            self._forwarders.pop(handle.turn_id, None)

    # -- lifecycle -------------------------------------------------------------------------
    def request_stop(self) -> None:
        self._stop.set()

    async def run(self, source: LineSource) -> None:
        from atomic_agent.plugins.sidecar.protocol_router import handle_item

        while not self._stop.is_set():
            next_item = asyncio.ensure_future(source.next())
            stop = asyncio.ensure_future(self._stop.wait())
            done, _ = await asyncio.wait({next_item, stop}, return_when=asyncio.FIRST_COMPLETED)
            stop.cancel()
            if next_item not in done:
                next_item.cancel()
                break
            item = next_item.result()
            if isinstance(item, EndOfInput):
                break
            await handle_item(self, item)
        await self.shutdown()

    async def shutdown(self) -> None:
        """The graceful stop: admit nothing more, give running turns `shutdownGraceS` to reach
        a step boundary and park them there, leave queued ones queued (each host turn hears
        turn_parked), then deny what approvals are left and close."""
        if self.closing:
            return
        self.closing = True
        if self._runtime is not None:
            await self._runtime.drain(self.limits.shutdown_grace_s)
        self.approvals.close()  # nobody will answer them now: deny pending and future prompts
        await self.registry.wait_all()
        await self.release()
