"""One "process" of the chaos world: a Runtime over the shared state dir, and its death.

The session state is the state dir's sessions.sqlite, or a PostgreSQL database when the
world has one (chaos_database): then every life boots with the `postgresql` plugin, and its
death also closes its backend's connections, as the kernel does for a killed process.

The world (state dir + logs) outlives every life. A life's Runtime gets an instrumented
SessionStore, the conversational provider and the chaos tools, all tied to the life's
FaultPlan. Every asyncio task created while the life is current is remembered (a task
factory reads a context variable), so killing the life can cancel exactly its tasks —
another live owner in the same event loop is left alone.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
from pathlib import Path
from typing import Any

import attrs

import atomic_agent.plugins.postgresql as postgresql_plugin
from atomic_agent.runtime.boot_context import boot
from atomic_agent.runtime.runtime import Runtime
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from tests.chaos.chaos_database import ChaosDatabase
from tests.chaos.chaos_tools import ChaosToolsPlugin, chaos_tools
from tests.chaos.conversational_provider import ConversationalProvider
from tests.chaos.crash_plan import FaultPlan, SimulatedCrash, instrument
from tests.chaos.world_log import JsonLog

CURRENT_LIFE: contextvars.ContextVar[Life | None] = contextvars.ContextVar("chaos_life", default=None)
_names = itertools.count()


@attrs.define
class ChaosWorld:
    root: Path
    fsync_logs: bool = False
    database: ChaosDatabase | None = None  # None: the state dir's sessions.sqlite

    @property
    def state_dir(self) -> Path:
        return self.root / "state"

    @property
    def effects(self) -> JsonLog:
        return JsonLog(self.root / "effects.jsonl", self.fsync_logs)

    @property
    def reads(self) -> JsonLog:
        return JsonLog(self.root / "reads.jsonl", self.fsync_logs)

    @property
    def acks(self) -> JsonLog:
        return JsonLog(self.root / "acks.jsonl", self.fsync_logs)


@attrs.define(eq=False)
class Life:
    world: ChaosWorld
    plan: FaultPlan
    name: str = attrs.field(factory=lambda: f"life{next(_names)}")
    runtime: Runtime = attrs.field(init=False)
    store: SessionRepository = attrs.field(init=False)
    tasks: set[asyncio.Task[Any]] = attrs.field(factory=set)
    died: asyncio.Event = attrs.field(factory=asyncio.Event)
    stopping: bool = False  # a graceful stop (SIGTERM) began: the caller issues nothing more
    drained: asyncio.Future[Any] | None = None

    def __attrs_post_init__(self) -> None:
        self.plan.on_death = self.died.set
        database = self.world.database
        env: dict[str, str] = {} if database is None else database.environ()
        host = fresh_plugin_host(environ=env)
        host.register(ChaosToolsPlugin(chaos_tools(self.name, self.plan.check_alive, self.world.effects,
                                                   self.world.reads)), "chaos_tools")
        if database is not None:
            host.register(postgresql_plugin, "postgresql")
            database.write_config(self.world.state_dir)
        ctx = boot(self.world.state_dir, environ=env, host=host)
        self.runtime = Runtime(ctx, provider=ConversationalProvider(self.plan.check_alive), environ=env)
        self.store = (SessionStore(ctx.state_dir) if database is None
                      else self.runtime.session_backend.open_store(ctx.state_dir))
        instrument(self.store, self.plan)
        self.runtime._sessions = self.store  # the runtime's one store is the instrumented one

    @property
    def dead(self) -> bool:
        return self.plan.dead

    def spawn(self, coro: Any) -> asyncio.Task[Any]:
        token = CURRENT_LIFE.set(self)
        try:
            return asyncio.ensure_future(coro)
        finally:
            CURRENT_LIFE.reset(token)

    async def bury(self) -> None:
        """What the kernel does to a dead process: its tasks stop, its open transaction rolls
        back, its owner lock is released. No shutdown hooks run (no `close()`)."""
        self.plan.dead = True
        me = asyncio.current_task()
        for _ in range(5):  # cancelled tasks may spawn more on their way out
            alive = [t for t in self.tasks if not t.done() and t is not me]
            if not alive:
                break
            for task in alive:
                task.cancel()
            await asyncio.gather(*alive, return_exceptions=True)
        if self.runtime._lifecycle is not None:
            self.runtime._lifecycle.lease.release()
        self.store.close()
        if self.world.database is not None:  # its pool's connections die with the process too
            self.runtime.session_backend.close()  # type: ignore[attr-defined]
        self.runtime._traces.close_all()  # the kernel closes a dead process's files

    def begin_graceful_stop(self, grace_s: float) -> None:
        """What a host does on SIGTERM: stop issuing work and drain (runtime.drain)."""
        if self.stopping or self.dead:
            return
        self.stopping = True
        self.drained = self.spawn(self.runtime.drain(grace_s))

    async def close(self) -> None:
        """A clean shutdown (the last life of a run, or one a graceful stop ended)."""
        if self.drained is not None:
            await asyncio.gather(self.drained, return_exceptions=True)
        await self.runtime.close()


def _retrieve_crash(task: asyncio.Task[Any]) -> None:
    """A task that died with its process has nobody to report to; anything else still reports."""
    if not task.cancelled() and isinstance(task.exception(), SimulatedCrash):
        return


def install_task_tracking() -> None:
    """Make every task remember the life current where it was created."""
    loop = asyncio.get_running_loop()

    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **kwargs: Any) -> asyncio.Task[Any]:
        task = asyncio.Task(coro, loop=loop, **kwargs)
        life = CURRENT_LIFE.get()
        if life is not None:
            life.tasks.add(task)
            task.add_done_callback(life.tasks.discard)
            task.add_done_callback(_retrieve_crash)
        return task

    loop.set_task_factory(factory)
