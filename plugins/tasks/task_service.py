"""The `tasks` service: the tasks' store and (in a runtime) the runner and scheduler tick.

The tasks live in tasks.sqlite, or, when the `shared_database` service is there (storage.url
names the fleet's PostgreSQL), in that database: every runtime of the fleet then claims from
one table (each due occurrence runs once fleet-wide), owners are fleet leases, and a tick
takes over the runs of an owner that died while this runtime runs (every TAKEOVER_INTERVAL_S),
not only at start.

Other plugins and hosts create, list and cancel tasks through it (`runtime.service("tasks")`);
the CLI opens one without a runtime for everything but running. The clock is injected
(epoch ms; `store_clock.now_ms` read at call time by default) so tests drive time. On the
fleet's database the default clock is the database's: this host's clock corrected by the
skew measured when the store opens and every CLOCK_CHECK_S while ticking, so a host whose
clock runs ahead or behind fires nothing early or late (due times are compared across hosts).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.metrics.metrics_contract import METRICS_SERVICE
from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

from .task_database import TaskDatabase, tasks_db_path
from .task_errors import TaskValidationError
from .task_records import ORIGINS, WAKE_SOURCES, TaskRecord
from .task_schedule import next_occurrence, parse_schedule
from .task_sessions import EPHEMERAL, GIVEN, RECURRING
from .task_store import TaskStore

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

MAX_MESSAGE_CHARS = 20_000
RUNNERS_DIR = "task-runners"
TAKEOVER_INTERVAL_S = 10.0  # how often a fleet scheduler looks for a dead owner's runs
NOTIFY_TARGETS = ("telegram",)


class DroppedMetrics:
    """What the runner records into when no plugin provides `metrics`."""

    def inc(self, name: str, amount: float = 1, **tags: Any) -> None:
        return None

    def observe(self, name: str, value: float, **tags: Any) -> None:
        return None


CLOCK_CHECK_S = 60.0  # how often a ticking host measures its clock against the fleet database's


def _default_clock() -> int:
    from atomic_agent.api import store_clock

    return store_clock.now_ms()


class TaskService:
    ValidationError = TaskValidationError

    def __init__(self, state_dir: Path, config: Any, *, runtime: RuntimeView | None = None, clock: Callable[[], int] | None = None,
                 metrics: Any = None, shared: Any = None) -> None:
        self.state_dir = Path(state_dir)
        self.config = config
        self.runtime = runtime
        self.shared = shared  # the fleet's database (postgresql_contract.SharedDatabase), None: tasks.sqlite
        self.takeover_interval_s = TAKEOVER_INTERVAL_S
        self._next_takeover = 0.0
        self.clock: Callable[[], int] = clock or self._corrected_clock
        self._clock_injected = clock is not None
        self._skew_ms = 0  # the fleet database's clock minus this host's (0 on tasks.sqlite)
        self._skew_read_at = 0.0
        self.metrics = metrics if metrics is not None else DroppedMetrics()
        self._store: TaskStore | None = None
        self._runner: Any = None
        self._lease: Any = None
        self.reports: Any = None
        self.tick_errors = 0

    @property
    def store(self) -> TaskStore:
        if self._store is None or self._store.database.closed:
            if self.shared is not None:
                from .pg_task_database import pg_task_database

                self._store = TaskStore(pg_task_database(self.shared))
                self._read_skew(self._store)
            else:
                self._store = TaskStore(TaskDatabase.open(tasks_db_path(self.state_dir)))
        return self._store

    def _corrected_clock(self) -> int:
        return _default_clock() + self._skew_ms

    def _read_skew(self, store: TaskStore) -> None:
        """Measure this host's clock against the fleet database's (the midpoint of the read)."""
        if self._clock_injected:
            return
        before = _default_clock()
        database_now = store.database_clock_ms()
        after = _default_clock()
        self._skew_ms = database_now - (before + after) // 2
        self._skew_read_at = time.monotonic()

    @property
    def runner(self) -> Any:
        if self.runtime is None:
            raise RuntimeError("running tasks needs a runtime (atomic-agent task run / tick boot one)")
        if self._runner is None:
            from atomic_agent.api import OwnerLease

            from .task_reports import TaskReports
            from .task_runner import TaskRunner

            store = self.store  # its schema first: the fleet lease registers in its tables
            if self.shared is not None:
                from .fleet_runner_lease import FleetRunnerLease

                self._lease = FleetRunnerLease(self.shared)
            else:
                self._lease = OwnerLease(self.state_dir, owners_dir=RUNNERS_DIR)
            self.reports = TaskReports(store, self.runtime, lambda: self.clock(), self._lease.owner,
                                       self._lease.is_alive)
            self._runner = TaskRunner(self.runtime, store, self.config, lambda: self.clock(), self._lease.owner,
                                      self._lease.is_alive, self.metrics, self.reports)
        return self._runner

    # -- create / cancel --------------------------------------------------------------------
    def create(self, message: str, *, origin: str = "cli", wake_source: str = "user",
               schedule: Mapping[str, Any] | None = None, session_id: str | None = None,
               new_session: bool = False, created_by_session: str | None = None, working_dir: Path | None = None,
               notify: str | None = None, sessions: Any = None) -> TaskRecord:
        """Validate and store a task (TaskValidationError names the field to fix). A recurring
        task without a session gets its persistent session now; a one-shot one lazily."""
        _check_message(message)
        if origin not in ORIGINS:
            raise TaskValidationError("origin", f"unknown origin {origin!r}")
        if wake_source not in WAKE_SOURCES:
            raise TaskValidationError("wakeSource", f"unknown wake source {wake_source!r}")
        if notify is not None and notify not in NOTIFY_TARGETS:
            raise TaskValidationError("notify", f"unknown notify target {notify!r}; use one of "
                                                f"{', '.join(NOTIFY_TARGETS)}")
        now = self.clock()
        parsed = parse_schedule(schedule, now_ms=now, min_interval_ms=self.config.min_interval_ms) \
            if schedule is not None else None
        due = now if parsed is None else next_occurrence(parsed, now - 1 if parsed["kind"] == "at" else now).due_at
        if due is None:
            raise TaskValidationError("schedule", "never comes due")
        recurring = parsed is not None and parsed["kind"] != "at"
        sessions = sessions if sessions is not None else self._sessions()
        if session_id is not None and not new_session:
            if sessions is not None and not sessions.exists(session_id):
                raise TaskValidationError("sessionId", f"session {session_id} does not exist")
            mode = GIVEN
        elif recurring:
            if sessions is None:
                raise TaskValidationError("schedule", "a recurring task needs the sessions store to make its session")
            session_id = sessions.create(working_dir or Path.home()).id
            mode = RECURRING
        else:
            session_id, mode = None, EPHEMERAL
        task = self.store.create(message=message, origin=origin, wake_source=wake_source, session_id=session_id,
                                 session_mode=mode, schedule=parsed, due_at=due, max_attempts=self.config.max_attempts,
                                 now=now, notify=notify, created_by_session=created_by_session,
                                 working_dir=str(working_dir) if working_dir is not None else None)
        self.metrics.inc("agent.tasks.created", origin=origin)
        if parsed is not None:
            self.metrics.inc("agent.tasks.scheduled", kind=parsed["kind"])
        return task

    def edit(self, task_id: str, *, message: str | None = None, schedule: Mapping[str, Any] | None = None,
             sessions: Any = None) -> TaskRecord:
        """A pending or paused task's new message and/or schedule (TaskValidationError names
        the field; TaskStateError when the task is running or over). A task that becomes
        recurring without a session gets its persistent session now, as at create."""
        if message is None and schedule is None:
            raise TaskValidationError("edit", "nothing to change: give a new message and/or a new schedule")
        if message is not None:
            _check_message(message)
        before = self.store.get(task_id)
        parsed = due = session_id = mode = None
        if schedule is not None:
            now = self.clock()
            parsed = parse_schedule(schedule, now_ms=now, min_interval_ms=self.config.min_interval_ms)
            due = next_occurrence(parsed, now - 1 if parsed["kind"] == "at" else now).due_at
            if due is None:
                raise TaskValidationError("schedule", "never comes due")
            if parsed["kind"] != "at" and before.session_id is None:
                sessions = sessions if sessions is not None else self._sessions()
                if sessions is None:
                    raise TaskValidationError("schedule", "a recurring task needs the sessions store to make its "
                                                          "session")
                working_dir = Path(before.working_dir) if before.working_dir else Path.home()
                session_id, mode = sessions.create(working_dir).id, RECURRING
        return self.store.edit(task_id, self.clock(), message=message, schedule=parsed, due_at=due,
                               session_id=session_id, session_mode=mode)

    def pause(self, task_id: str) -> TaskRecord:
        """pending -> paused (idempotent); the scheduler skips it until resumed."""
        return self.store.set_paused(task_id, True, self.clock())

    def resume(self, task_id: str) -> TaskRecord:
        """paused -> pending (idempotent), keeping its due time."""
        return self.store.set_paused(task_id, False, self.clock())

    def delete(self, task_id: str) -> TaskRecord:
        """Remove the task, its runs and its reports (refused while it runs); returns it as it was."""
        return self.store.delete(task_id)

    def cancel(self, task_id: str) -> TaskRecord:
        """Idempotent: a terminal task comes back unchanged."""
        before = self.store.get(task_id)
        task = self.store.cancel(task_id, self.clock())
        if self._runner is not None and task.status == "running":
            self._runner.cancel_running(task_id)
        if before.status != task.status and task.status == "cancelled":
            self.metrics.inc("agent.tasks.cancelled")
        return task

    def named_session(self, name: str, working_dir: Path) -> str:
        """The persistent session kept under `name` (made now the first time, and again if it
        was deleted)."""
        sessions = self._sessions()
        found = self.store.named_session(name)
        if found is not None and sessions.exists(found):
            return found
        made = sessions.create(working_dir).id
        self.store.set_named_session(name, made)
        return made

    def _sessions(self) -> Any:
        if self.runtime is None:
            return None
        return self.runtime.service("sessions")

    # -- the scheduler tick ------------------------------------------------------------------
    async def tick(self) -> Any:
        """One scheduler tick: run what is due (at most `schedulerBatch` rows). Errors are
        counted (`agent.scheduler.tick_errors`) and re-raised for the runtime to report."""
        started = time.perf_counter()
        self.metrics.inc("agent.scheduler.ticks")
        try:
            if not self.runner.recovered:
                self.recover_stale()
            elif self.shared is not None and time.monotonic() >= self._next_takeover:
                self.take_over_dead()
            if self.shared is not None and time.monotonic() - self._skew_read_at >= CLOCK_CHECK_S:
                self._read_skew(self.store)
            report = await self.runner.run_due(self.clock(), self.config.scheduler_batch)
            self.metrics.observe("agent.scheduler.batch_size", report.claimed)
            await self.reports.deliver_pending()
            return report
        except Exception:
            self.tick_errors += 1
            self.metrics.inc("agent.scheduler.tick_errors")
            raise
        finally:
            self.metrics.observe("agent.scheduler.tick_duration_ms", (time.perf_counter() - started) * 1000)

    def recover_stale(self) -> list[tuple[str, str]]:
        try:
            settled = self.runner.recover_stale()
            self.reports.settle_dead_attempts()
            return settled
        except Exception as exc:
            print(f"atomic-agent: tasks: stale recovery failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            raise

    def take_over_dead(self) -> list[tuple[str, str]]:
        """On the fleet's database: keep this runner's lease, and settle the runs (and report
        sends) of owners that died since, as a start settles them."""
        self._next_takeover = time.monotonic() + self.takeover_interval_s
        if not self._lease.keep():
            print("atomic-agent: tasks: this runner's fleet lease was lost (the database connection dropped and "
                  "another host took it); its runs may be taken over", file=sys.stderr)
        settled = self.runner.settle_dead_owners()
        self.reports.settle_dead_attempts()
        self._lease.forget_dead()
        return settled

    def close(self) -> None:
        if self._store is not None:
            self._store.database.close()
            self._store = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None
        self._runner = None


def _check_message(message: Any) -> None:
    from atomic_agent.api import text_problem

    if not isinstance(message, str) or not message.strip():
        raise TaskValidationError("message", "must be non-empty text")
    if len(message) > MAX_MESSAGE_CHARS:
        raise TaskValidationError("message", f"is {len(message)} characters; the limit is {MAX_MESSAGE_CHARS}")
    problem = text_problem(message)
    if problem:
        raise TaskValidationError("message", str(problem))


def build_task_service(runtime: RuntimeView) -> TaskService:
    metrics = runtime.service(METRICS_SERVICE, None)
    return TaskService(runtime.state_dir, runtime.config.block("tasks"), runtime=runtime, metrics=metrics,
                       shared=runtime.service(SHARED_DATABASE_SERVICE, None))
