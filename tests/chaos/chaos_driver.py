"""Play a workload against a sequence of lives; the harness is the outside caller.

The driver writes the acknowledgement log — only once a runtime call returned to it:
`admitted` when `turn_queued` arrived (admission is on disk by then), `steered` when
`steer` answered ACCEPTED, `finished` when `run_turn` returned, `withdrawn` when a cancelled
submission was refused, `cancel_asked` when it set a submission's cancel event (the answer
may die with the process: such a message is in the conversation once, or was withdrawn).
Steers handed back undelivered are the caller's again: it sends them as new turns, in a
later life if need be, naming the handed-back row (`resend_steer_id`) so a copy that was
already re-sent or requeued by recovery is refused instead of answered twice. A refused steer is sent instead. With `abort`, a send's own event
callback may stop or cancel it mid-stream, or kill the process there (StreamAbort).
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from typing import Any

import attrs

from atomic_agent.sessions.compact_session import CompactionError
from atomic_agent.turns.durable_steering import SteerAlreadyTakenError
from atomic_agent.turns.graceful_stop import RuntimeStoppingError, TurnParkedError
from atomic_agent.turns.turn_controller import SubmissionCancelledError
from tests.chaos.chaos_life import ChaosWorld, Life
from tests.chaos.crash_plan import SimulatedCrash
from tests.chaos.workload import CANCEL, COMPACT, SEND, STEER, STOP, Op

LIFE_TIMEOUT_S = 30.0
ABORT_WAYS = ("stop", "cancel", "cancel_crash", "crash")
MAX_ABORT_EVENT = 20
# half the aborts aim at a kind of event (its 1st-3rd occurrence): counted blindly, most
# would land on text deltas, which outnumber every other event
ABORT_EVENTS = ("turn_queued", "turn_started", "step_started", "tool_call_started", "tool_call_result",
                "steer_applied", "assistant_reply", "turn_finished")


@attrs.frozen
class StreamAbort:
    """Abort a send from inside its own `on_event` callback, at its `at`-th event (of type
    `on`, when set): stop the lane, set the caller's cancel event, or either with the process
    dying right there (a crash at an event, not at a write). A life that is not scheduled to
    die only aborts."""

    at: int
    way: str
    on: str | None = None


def draw_abort(rng: random.Random | None, chance: float) -> StreamAbort | None:
    if rng is None or rng.random() >= chance:
        return None
    way = rng.choice(ABORT_WAYS)
    if rng.random() < 0.5:
        return StreamAbort(rng.randint(1, 3), way, rng.choice(ABORT_EVENTS))
    return StreamAbort(rng.randint(1, MAX_ABORT_EVENT), way)


class Driver:
    def __init__(self, world: ChaosWorld, rng: random.Random, ops: list[Op], expected_errors: tuple[type, ...] = (),
                 abort: float = 0.0, abort_rng: random.Random | None = None):
        self.world = world
        self.rng = rng
        self.abort = abort
        self.abort_rng = abort_rng  # its own stream: turning aborts on changes no other draw of a seed
        self.ops: deque[Op] = deque(ops)
        # handed-back steers the caller must still send, in the order they were accepted:
        # (acceptance number, session, text, steer id or None)
        self.owed: deque[tuple[int, int, str, str | None]] = deque()
        self.owed_count = 0
        self.sessions: list[str] = []
        self.expected_errors = expected_errors
        self.errors: list[str] = []  # unexpected exceptions seen by the caller
        self.inflight: dict[int, dict[str, asyncio.Event]] = {}  # session -> text -> its cancel event
        self.unsure: set[str] = set()  # owed texts whose last send died without an answer
        # session -> set once this life's latest re-send of an owed steer there is admitted or
        # has failed: the next one waits for it, so a failed re-send is retried before later ones
        self.resending: dict[int, asyncio.Event] = {}

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
        self.resending = {}  # a dead life's re-sends settle nothing here
        if recover:
            report = await life.runtime.recover(resume=True)
            for fut in report.results:
                mine.append(asyncio.ensure_future(self._adopted(life, fut)))
        issued = 0
        while not life.dead:
            if life.stopping:  # a graceful stop: issue nothing more, wait for what is in flight
                pending = [t for t in mine if not t.done()]
                if not pending:
                    break
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                continue
            if self.owed:
                # one re-send at a time per session, each after the last one's admission: sent
                # side by side, a first re-send refused by the store would be retried after a
                # second one had been admitted, and the caller itself would reorder the steers
                earlier = self.resending.get(self.owed[0][1])
                if earlier is not None and not earlier.is_set():
                    await earlier.wait()
                    continue
                number, s, text, steer_id = self.owed.popleft()
                if not self._reconciled(life, s, text):
                    self.resending[s] = asyncio.Event()
                    mine.append(asyncio.ensure_future(self._send(life, s, text, owed=(number, steer_id))))
            elif self.ops and (ops_budget is None or issued < ops_budget):
                op = self.ops.popleft()
                issued += 1
                task = self._issue(life, op)
                if task is not None:
                    mine.append(task)
                for _ in range(op.gap):
                    await asyncio.sleep(0)
            else:
                # turns the runtime made of steers nobody could take run on their own: wait for them too
                pending = [t for t in (*mine, *life.runtime.lifecycle.unattended) if not t.done()]
                if not pending:
                    break
                await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in mine:  # a stop may end the loop with sends still unwinding
            if not task.done():
                await asyncio.wait({task})
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
                text = self.rng.choice(sorted(waiting))
                # logged before the event is set: if the runtime then dies after recording the
                # withdrawal but before raising it, the caller still knows it asked
                self.ack(life, "cancel_asked", session=sid, text=text)
                waiting[text].set()
            return None
        if op.kind == COMPACT:
            return asyncio.ensure_future(self._compact(life, sid))
        raise ValueError(op.kind)

    async def _send(self, life: Life, s: int, text: str, owed: tuple[int, str | None] | None = None) -> None:
        """Send `text` as a new turn. An `owed` text (a steer that was accepted, then handed
        back: its acceptance number and durable id) stays owed until its admission is
        acknowledged: a caller whose send failed or whose runtime died before `turn_queued`
        still holds it and sends it again, in acceptance order with the others it holds."""
        sid = self.sessions[s]
        self.ack(life, "sending", session=sid, text=text)  # when the send began (see invariants' fifo)
        settled = self.resending.get(s) if owed is not None else None
        cancel = asyncio.Event()
        self.inflight.setdefault(s, {})[text] = cancel
        admitted = False
        abort = draw_abort(self.abort_rng, self.abort)
        seen = 0

        def sink(event: dict[str, Any]) -> None:
            nonlocal admitted, seen
            if event.get("type") == "turn_queued":
                admitted = True
                self.ack(life, "admitted", session=sid, text=text, turn_id=event.get("turnId"))
                if settled is not None:
                    settled.set()
            if abort is None or abort.on not in (None, event.get("type")):
                return
            seen += 1
            if seen == abort.at:
                self._abort(life, abort, sid, text, cancel, str(event.get("type")))

        try:
            result = await life.runtime.run_turn(text, session_id=sid, on_event=sink, cancelled=cancel,
                                                 resend_steer_id=None if owed is None else owed[1])
        except SubmissionCancelledError:
            self.ack(life, "withdrawn", session=sid, text=text)
            return
        except SteerAlreadyTakenError:
            # it is answered elsewhere (requeued by recovery, or re-sent by an earlier life)
            self.ack(life, "resend_refused", session=sid, text=text, steer_id=None if owed is None else owed[1])
            return
        except TurnParkedError as exc:
            # a graceful stop left the admitted turn queued: the next start answers it
            self.ack(life, "parked", session=sid, text=text, turn_id=exc.turn_id)
            return
        except RuntimeStoppingError:
            # refused before anything was written: the caller still holds the text for the next life
            if owed is not None:
                self.owed = deque(sorted((*self.owed, (owed[0], s, text, owed[1]))))
            else:
                self.ops.appendleft(Op(SEND, s, text))
            return
        except BaseException as exc:
            if owed is not None and not admitted:
                # several re-sends die together: they go back in acceptance order, not death order
                self.owed = deque(sorted((*self.owed, (owed[0], s, text, owed[1]))))
                self.unsure.add(text)
            if isinstance(exc, (SimulatedCrash, asyncio.CancelledError)):
                raise
            if not isinstance(exc, self.expected_errors):
                self.errors.append(f"{life.name} send {text}: {type(exc).__name__}: {exc}")
            return
        finally:
            self.inflight.get(s, {}).pop(text, None)
            if settled is not None:  # refused or failed: back in `owed` (in order) by now, or answered elsewhere
                settled.set()
        self._finished(life, result)

    def _abort(self, life: Life, abort: StreamAbort, sid: str, text: str, cancel: asyncio.Event, at: str) -> None:
        """Runs inside the runtime's own emit: whatever it raises unwinds the turn from there."""
        self.ack(life, "stream_abort", session=sid, text=text, way=abort.way, event=at, index=abort.at, on=abort.on)
        if abort.way == "stop":
            life.runtime.stop(sid)
        if abort.way in ("cancel", "cancel_crash"):
            self.ack(life, "cancel_asked", session=sid, text=text)
            cancel.set()
        if abort.way in ("cancel_crash", "crash") and life.plan.crash_at is not None:
            life.plan.die(f"crash inside the event stream of {text}, at its event {abort.at} ({at})")

    def _reconciled(self, life: Life, s: int, text: str) -> bool:
        """Before resending a text whose last send died unanswered, look it up the way a client
        with an idempotency key would: the admission may have committed just before the death.
        Texts are unique per run, so a turn with this text is that send."""
        if text not in self.unsure:
            return False
        self.unsure.discard(text)
        sid = self.sessions[s]
        row = life.runtime.lifecycle.ledger.conn.execute(
            "select turn_id from turns where session_id = ? and text = ?", [sid, text]).fetchone()
        if row is None:
            return False
        self.ack(life, "admitted", session=sid, text=text, turn_id=row[0], reconciled=True)
        return True

    async def _adopted(self, life: Life, fut: asyncio.Future[Any]) -> None:
        try:
            result = await fut
        except (SimulatedCrash, SubmissionCancelledError, TurnParkedError, *self.expected_errors):
            return
        except Exception as exc:
            self.errors.append(f"{life.name} resumed turn: {type(exc).__name__}: {exc}")
            return
        self._finished(life, result)

    def _finished(self, life: Life, result: Any) -> None:
        self.ack(life, "finished", session=result.session_id, turn_id=result.turn_id, state=result.state,
                 status=result.status, reply=result.reply, undelivered=list(result.undelivered))
        s = self.sessions.index(result.session_id)
        for text, steer_id in result.handed_back():
            self.owed_count += 1
            self.owed.append((self.owed_count, s, text, steer_id or None))

    async def _compact(self, life: Life, sid: str) -> None:
        try:
            await life.runtime.compact(sid)
        except (CompactionError, *self.expected_errors):
            pass
        except SimulatedCrash:
            raise
        except Exception as exc:
            self.errors.append(f"{life.name} compact: {type(exc).__name__}: {exc}")
