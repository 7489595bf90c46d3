"""TaskRunner: claims due tasks and runs each through `runtime.run_turn(origin="scheduler")`.

Drains group the due tasks by session: sequential within a session (each run also queues
FIFO on the session's lane behind any user turn), parallel across sessions. Each run is
claimed in tasks.sqlite before its turn is admitted, and the turn carries the attempt's
key as its idempotency key, so an attempt admits at most one turn in any process, before
or after a restart. Success is recorded only when the turn completed.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict

import attrs

from . import attempt_outcome as ao
from .occurrence_plan import SkippedBlock, plan_claim
from .task_backoff import next_delay_ms
from .task_records import BLOCKED, CANCELLED, COMPLETED, FAILED, PENDING, RUN_INTERRUPTED, RUN_RETRY, TaskRecord
from .task_schedule import next_occurrence
from .task_sessions import SessionMissing, session_for_run
from .task_store import TaskStore

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

METRIC_PREFIX = "agent.tasks."
CANCEL_POLL_S = 1.0  # how soon a cancel written by another process reaches a running turn


class AttemptFields(TypedDict):
    """What every ending of an attempt records (TaskStore.finish's keyword arguments)."""

    now: int
    turn_id: str | None
    error: str | None
    category: str | None
    reply: str | None
    tool_calls: list[dict[str, Any]] | None


@attrs.frozen
class DrainReport:
    claimed: int = 0
    skipped_only: int = 0
    outcomes: tuple[tuple[str, str], ...] = ()  # (task id, outcome kind)


class TaskRunner:
    def __init__(self, runtime: RuntimeView, store: TaskStore, config: Any, clock: Callable[[], int], owner: str,
                 is_alive: Callable[[str | None], bool], metrics: Any, reports: Any = None) -> None:
        self.runtime = runtime
        self.store = store
        self.config = config
        self.clock = clock
        self.owner = owner
        self.is_alive = is_alive
        self.metrics = metrics
        self.reports = reports
        self._cancels: dict[str, asyncio.Event] = {}
        self._asked: set[str] = set()  # tasks cancelled through cancel_running in this process
        self.recovered = False
        self.cancel_poll_s = CANCEL_POLL_S

    # -- drains -------------------------------------------------------------------------
    async def run_due(self, now: int | None = None, limit: int | None = None) -> DrainReport:
        """Claim and run what is due at `now` (at most `limit` rows), grouped by session."""
        now = self.clock() if now is None else now
        ids = self.store.due_ids(now, limit if limit is not None else 1 << 31)
        groups: dict[str, list[str]] = {}
        for task_id in ids:
            task = self.store.get(task_id)
            groups.setdefault(task.session_id or f"task:{task.id}", []).append(task.id)
        reports = await asyncio.gather(*(self._drain_group(group) for group in groups.values()))
        outcomes = tuple(o for report in reports for o in report.outcomes)
        return DrainReport(sum(r.claimed for r in reports), sum(r.skipped_only for r in reports), outcomes)

    async def run_now(self, task_id: str) -> DrainReport:
        """Run one pending task now, whatever its due time (`atomic-agent task run ID`)."""
        with self.store.database.write() as conn:
            conn.execute("UPDATE tasks SET due_at = ? WHERE id = ? AND status = 'pending'", [self.clock(), task_id])
        return await self._drain_group([task_id])

    async def _drain_group(self, task_ids: Sequence[str]) -> DrainReport:
        claimed = skipped_only = 0
        outcomes: list[tuple[str, str]] = []
        for task_id in task_ids:
            task, plan = self.store.claim(task_id, self.clock(), self.owner, lambda t: plan_claim(t, self.clock()))
            if plan is not None:
                skipped = sum(block.count for block in plan.skipped)
                if skipped:
                    self.metrics.inc(METRIC_PREFIX + "skipped", skipped)
            if task is None:
                if plan is not None:
                    skipped_only += 1
                continue
            claimed += 1
            outcomes.append((task.id, await self.run_claimed(task)))
        return DrainReport(claimed, skipped_only, tuple(outcomes))

    # -- one attempt ----------------------------------------------------------------------
    async def run_claimed(self, task: TaskRecord) -> str:
        from atomic_agent.api import (
            DuplicateRequestError,
            InvalidTextError,
            RequestKey,
            RuntimeStoppingError,
            SessionNotFoundError,
            SubmissionCancelledError,
            TurnParkedError,
        )

        started = time.perf_counter()
        self.metrics.inc(METRIC_PREFIX + "started")
        self.metrics.observe(METRIC_PREFIX + "attempts", task.attempts)
        sessions = self.runtime.service("sessions")
        try:
            session_id = session_for_run(task, self.store, sessions, self.metrics)
        except SessionMissing as exc:
            return self._settle(task, ao.AttemptOutcome(ao.BLOCK, None, "session_not_found", str(exc)), started)
        self.store.stamp_wake(session_id, task.id, task.wake_source, self.clock(),
                              f"occurrence {task.occurrence_at} attempt {task.attempts}")
        cancelled = self._cancels.setdefault(task.id, asyncio.Event())
        if task.cancel_requested:
            cancelled.set()
        key = RequestKey.of(task.attempt_key or "", task.id, task.message, task.occurrence_at, task.attempts,
                            caller_ref=task.id)
        watcher = asyncio.ensure_future(self._watch_cancel(task.id, cancelled))
        tool_calls: list[dict[str, Any]] | None = None
        try:
            result = await self.runtime.run_turn(task.message, session_id=session_id, origin="scheduler",
                                                 cancelled=cancelled, request_key=key)
            outcome = ao.outcome_of_result(result)
            tool_calls = _tool_summary(sessions, result)
        except DuplicateRequestError as dup:  # this attempt's turn exists already: follow it, never admit twice
            outcome = ao.outcome_of_answer(self.runtime.answer_of(dup.existing.turn_id))
        except RuntimeStoppingError:  # nothing was admitted: the attempt is given back untouched
            self.store.release_unstarted(task, self.clock(), "the agent was stopping; not started")
            return "released"
        except TurnParkedError:  # admitted, parked by a graceful stop: the next start settles it
            return "parked"
        except SubmissionCancelledError as exc:  # cancelled while it waited for the session's lane
            outcome = ao.AttemptOutcome(ao.CANCEL, None, "cancelled", str(exc))
        except InvalidTextError as exc:
            outcome = ao.AttemptOutcome(ao.BLOCK, None, "invalid_text", str(exc))
        except SessionNotFoundError as exc:
            outcome = ao.AttemptOutcome(ao.BLOCK, None, "session_not_found", str(exc))
        except Exception as exc:
            outcome = ao.outcome_of_error(exc)
        finally:
            watcher.cancel()
            self._cancels.pop(task.id, None)
        return self._settle(task, outcome, started, tool_calls)

    async def _watch_cancel(self, task_id: str, cancelled: asyncio.Event) -> None:
        """A cancel written by another process (the CLI beside `serve`) reaches the running turn."""
        while not cancelled.is_set():
            await asyncio.sleep(self.cancel_poll_s)
            try:
                if self.store.cancel_requested(task_id):
                    cancelled.set()
            except Exception as exc:  # a locked or closed store must not end the run
                print(f"atomic-agent: task {task_id}: could not read its cancel flag: {exc}", file=sys.stderr)

    def cancel_running(self, task_id: str) -> bool:
        event = self._cancels.get(task_id)
        if event is None:
            return False
        self._asked.add(task_id)
        event.set()
        return True

    def _settle(self, task: TaskRecord, outcome: ao.AttemptOutcome, started: float | None,
                tool_calls: list[dict[str, Any]] | None = None) -> str:
        """Record how the attempt ended and move the task on (requeue, retry or a terminal state)."""
        now = self.clock()
        common: AttemptFields = {"now": now, "turn_id": outcome.turn_id, "error": outcome.error,
                                 "category": outcome.category, "reply": outcome.reply, "tool_calls": tool_calls}
        kind = outcome.kind
        if kind == ao.RETRY and task.attempts < task.max_attempts:
            delay = next_delay_ms(task.attempts, self.config.backoff_initial_ms, self.config.backoff_max_ms)
            finished = self.store.finish(task, run_status=RUN_RETRY, next_status=PENDING, next_due=now + delay,
                                         **common)
            self._count("retried", finished)
        elif kind == ao.BLOCK:
            finished = self.store.finish(task, run_status=BLOCKED, next_status=BLOCKED, **common)
            self._count("blocked", finished)
        elif kind == ao.CANCEL and (self._cancel_asked(task) or not task.recurring):
            finished = self.store.finish(task, run_status=CANCELLED, next_status=CANCELLED, **common)
            self._count("cancelled", finished)
        else:  # this occurrence is over (a recurring task stopped mid-firing, not cancelled, keeps its schedule)
            run_status = {ao.SUCCEEDED: COMPLETED, ao.INTERRUPT: RUN_INTERRUPTED, ao.CANCEL: CANCELLED}.get(kind, FAILED)
            terminal = COMPLETED if kind == ao.SUCCEEDED else FAILED
            if task.recurring and task.schedule is not None:
                following = next_occurrence(task.schedule, max(task.occurrence_at or now, 0))
                # gaps the claim already recorded (passed by then) are not recorded twice
                gaps = tuple(SkippedBlock(g.occurrence_at, 1, g.reason) for g in following.skipped
                             if g.occurrence_at > (task.started_at or 0))
                finished = self.store.finish(
                    task, run_status=run_status, next_status=PENDING if following.due_at is not None else terminal,
                    next_due=following.due_at, next_occurrence=following.due_at, reset_attempts=True,
                    skipped=gaps, **common)
                if finished is not None and following.due_at is not None:
                    self.metrics.inc(METRIC_PREFIX + "recurring_requeued")
            else:
                finished = self.store.finish(task, run_status=run_status, next_status=terminal, **common)
            self._count(run_status if run_status != RUN_INTERRUPTED else "interrupted", finished)
        retried = kind == ao.RETRY and task.attempts < task.max_attempts
        if finished is not None and self.reports is not None and kind != ao.CANCEL and not retried:
            # terminal for this occurrence (a recurring task reports each firing): the report is owed now
            status = {ao.SUCCEEDED: COMPLETED, ao.BLOCK: BLOCKED, ao.INTERRUPT: RUN_INTERRUPTED}.get(kind, FAILED)
            self.reports.record(task, status, outcome.reply, outcome.error)
        if finished is None:
            print(f"atomic-agent: task {task.id}: its claim was taken over before the outcome ({kind}) could be "
                  "recorded; nothing written", file=sys.stderr)
            return "lost_claim"
        self._asked.discard(task.id)
        if started is not None:
            self.metrics.observe(METRIC_PREFIX + "duration_ms", (time.perf_counter() - started) * 1000)
        return kind

    def _cancel_asked(self, task: TaskRecord) -> bool:
        """Someone cancelled the task itself (not a stop of one firing, not a shutdown)."""
        return task.id in self._asked or self.store.cancel_requested(task.id)

    def _count(self, what: str, finished: TaskRecord | None) -> None:
        if finished is not None:
            self.metrics.inc(METRIC_PREFIX + what)

    # -- stale recovery -------------------------------------------------------------------
    def recover_stale(self) -> list[tuple[str, str]]:
        """Once per runtime, at start: settle the running rows a dead process left.

        Rows of a live owner (another runtime on this state dir) are not touched. For a dead
        owner's row the attempt's key finds its turn: no turn admitted -> pending again (the
        attempt is not counted, nothing ran); the turn's durable answer settled -> recorded
        as if the run had returned; still owed (interrupted mid-run) -> recorded
        `interrupted`, never sent again (the turn lifecycle answers it)."""
        if self.recovered:
            return []
        self.recovered = True
        return self.settle_dead_owners()

    def settle_dead_owners(self) -> list[tuple[str, str]]:
        """Settle the running rows whose owner is dead now (recover_stale's rules); on a
        fleet's database a live runtime calls it again and again to take over a dead host's runs.
        Each settle is conditional on the claim, so two runtimes settling one row write it once."""
        done: list[tuple[str, str]] = []
        alive: dict[str | None, bool] = {}  # one liveness probe per owner per pass
        for task in self.store.running():
            if task.owner == self.owner:
                continue
            if task.owner not in alive:
                alive[task.owner] = self.is_alive(task.owner)
            if alive[task.owner]:
                continue
            keyed = self.runtime.turn_for_key(task.attempt_key) if task.attempt_key else None
            if keyed is None:
                if self.store.release_unstarted(task, self.clock(),
                                                "recovered: the process died before its turn was admitted"):
                    done.append((task.id, "released"))
                continue
            self.store.record_turn(task, keyed.turn_id)
            outcome = ao.outcome_of_answer(self.runtime.answer_of(keyed.turn_id))
            done.append((task.id, self._settle(task, outcome, None)))
        return done


MAX_LOGGED_CALLS = 50


def _tool_summary(sessions: Any, result: Any) -> list[dict[str, Any]] | None:
    """The turn's tool calls as `task logs` shows them: each result's tool and status, in
    order (at most MAX_LOGGED_CALLS). None when the transcript cannot be read: a log line is
    not worth failing a finished run over."""
    try:
        rows = [e for e in sessions.entries(result.session_id) if e.turn_index == result.turn_index]
    except Exception as exc:
        print(f"atomic-agent: task run: could not read the turn's tool calls: {type(exc).__name__}: {exc}",
              file=sys.stderr)
        return None
    # "tool_result" is the transcript kind of a tool's answer (one per call, its status ok/error/cancelled)
    calls = [{"tool": e.tool, "status": e.status} for e in rows if e.kind == "tool_result"]
    return calls[:MAX_LOGGED_CALLS]
