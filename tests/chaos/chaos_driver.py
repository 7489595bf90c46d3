"""Play a workload against a sequence of lives; the harness is the outside caller.

The driver writes the acknowledgement log — only once a runtime call returned to it:
`admitted` when `turn_queued` arrived (admission is on disk by then), `steered` when
`steer` answered ACCEPTED, `finished` when `run_turn` returned, `withdrawn` when a cancelled
submission was refused. Steers handed back undelivered are the caller's again: it sends
them as new turns, in a later life if need be. A refused steer is sent instead.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any

from atomic_agent.runtime.turn_controller import SubmissionCancelledError
from atomic_agent.sessions.compact_session import CompactionError

from tests.chaos.chaos_life import ChaosWorld, Life
from tests.chaos.crash_plan import SimulatedCrash
from tests.chaos.workload import CANCEL, COMPACT, SEND, STEER, STOP, Op

LIFE_TIMEOUT_S = 30.0


class Driver:
    def __init__(self, world: ChaosWorld, rng: random.Random, ops: list[Op], expected_errors: tuple[type, ...] = ()):
        self.world = world
        self.rng = rng
        self.ops: deque[Op] = deque(ops)
        self.owed: deque[tuple[int, str]] = deque()  # handed-back steers the caller must still send
        self.sessions: list[str] = []
        self.expected_errors = expected_errors
        self.errors: list[str] = []  # unexpected exceptions seen by the caller
        self.inflight: dict[int, dict[str, asyncio.Event]] = {}  # session -> text -> its cancel event

    def ack(self, life: Life, kind: str, **fields: Any) -> None:
        self.world.acks.append({"kind": kind, "life": life.name, **fields})

    def ensure_sessions(self, life: Life, count: int) -> None:
        while len(self.sessions) < count:
            self.sessions.append(life.runtime.open_session(None, self.world.root).id)

    # -- one life ------------------------------------------------------------------------------
    async def live(self, life: Life, *, recover: bool, ops_budget: int | None = None) -> bool:
        """Run `life` until its share of the work is done or it dies; True if it died."""
        body = life.spawn(self._body(life, recover, ops_budget))
        died = asyncio.ensure_future(life.died.wait())
        try:
            done, _ = await asyncio.wait({body, died}, timeout=LIFE_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            died.cancel()
        if not done:
            raise AssertionError(f"{life.name} made no progress for {LIFE_TIMEOUT_S}s (a lost wake-up?)")
        if life.dead:
            await life.bury()
            if body.done() and not body.cancelled():
                body.exception()  # the crash itself: retrieved, not reported as a stray error
            return True
        exc = body.exception()
        if exc is not None:
            raise exc
        return False

    async def _body(self, life: Life, recover: bool, ops_budget: int | None) -> None:
        mine: list[asyncio.Task[Any]] = []
        if recover:
            report = await life.runtime.recover(resume=True)
            for fut in report.results:
                mine.append(asyncio.ensure_future(self._adopted(life, fut)))
        issued = 0
        while not life.dead:
            if self.owed:
                s, text = self.owed.popleft()
                mine.append(asyncio.ensure_future(self._send(life, s, text)))
            elif self.ops and (ops_budget is None or issued < ops_budget):
                op = self.ops.popleft()
                issued += 1
                task = self._issue(life, op)
                if task is not None:
                    mine.append(task)
                for _ in range(op.gap):
                    await asyncio.sleep(0)
            else:
                pending = [t for t in mine if not t.done()]
                if not pending:
                    break
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in mine:
            if task.done() and not task.cancelled() and task.exception() is not None:
                raise task.exception()  # type: ignore[misc]

    def _issue(self, life: Life, op: Op) -> asyncio.Task[Any] | None:
        sid = self.sessions[op.session]
        if op.kind == SEND:
            return asyncio.ensure_future(self._send(life, op.session, op.text))
        if op.kind == STEER:
            target = life.runtime.lifecycle.running_turn_id(sid)
            try:
                steered = life.runtime.steer(sid, op.text).steered
            except self.expected_errors:  # a typed store error: nothing was accepted
                steered = False
            if steered:
                self.ack(life, "steered", session=sid, text=op.text, target=target)
                return None
            return asyncio.ensure_future(self._send(life, op.session, op.text))  # refused: send it instead
        if op.kind == STOP:
            life.runtime.stop(sid)
            return None
        if op.kind == CANCEL:
            waiting = self.inflight.get(op.session, {})
            if waiting:
                waiting[self.rng.choice(sorted(waiting))].set()
            return None
        if op.kind == COMPACT:
            return asyncio.ensure_future(self._compact(life, sid))
        raise ValueError(op.kind)

    async def _send(self, life: Life, s: int, text: str) -> None:
        sid = self.sessions[s]
        cancel = asyncio.Event()
        self.inflight.setdefault(s, {})[text] = cancel

        def sink(event: dict[str, Any]) -> None:
            if event.get("type") == "turn_queued":
                self.ack(life, "admitted", session=sid, text=text, turn_id=event.get("turnId"))

        try:
            result = await life.runtime.run_turn(text, session_id=sid, on_event=sink, cancelled=cancel)
        except SubmissionCancelledError:
            self.ack(life, "withdrawn", session=sid, text=text)
            return
        except SimulatedCrash:
            raise
        except self.expected_errors:
            return
        except Exception as exc:
            self.errors.append(f"{life.name} send {text}: {type(exc).__name__}: {exc}")
            return
        finally:
            self.inflight.get(s, {}).pop(text, None)
        self._finished(life, result)

    async def _adopted(self, life: Life, fut: asyncio.Future[Any]) -> None:
        try:
            result = await fut
        except (SimulatedCrash, SubmissionCancelledError, *self.expected_errors):
            return
        except Exception as exc:
            self.errors.append(f"{life.name} resumed turn: {type(exc).__name__}: {exc}")
            return
        self._finished(life, result)

    def _finished(self, life: Life, result: Any) -> None:
        self.ack(life, "finished", session=result.session_id, turn_id=result.turn_id, state=result.state,
                 status=result.status, reply=result.reply, undelivered=list(result.undelivered))
        s = self.sessions.index(result.session_id)
        self.owed.extend((s, text) for text in result.undelivered)

    async def _compact(self, life: Life, sid: str) -> None:
        try:
            await life.runtime.compact(sid)
        except (CompactionError, *self.expected_errors):
            pass
        except SimulatedCrash:
            raise
        except Exception as exc:
            self.errors.append(f"{life.name} compact: {type(exc).__name__}: {exc}")
