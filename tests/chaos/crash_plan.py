"""Fault injection at the one seam every sessions.sqlite write goes through: `SessionStore.write`.

Each outermost `write()` is one operation (nested ones join it). A plan can kill the
process at operation N — just before its COMMIT (the transaction rolls back, as the OS would
on a real death) or just after it (durable, but the caller never learned) — or make chosen
operations fail with `sqlite3.OperationalError` while the process keeps running (flaky store).
Once dead, every later write of that store raises too: a zombie coroutine of a dead process
must never reach the disk.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

BEFORE_COMMIT = "before_commit"
AFTER_COMMIT = "after_commit"


class SimulatedCrash(BaseException):
    """The process died here. BaseException, so `except Exception` in runtime code cannot swallow it."""


@attrs.define
class FaultPlan:
    crash_at: int | None = None  # 1-based index of the outermost write at which to die
    where: str = BEFORE_COMMIT
    flaky: frozenset[int] = frozenset()  # write indexes that fail with OperationalError (process lives on)
    exit_code: int | None = None  # subprocess tier: die with os._exit(code) instead of raising
    ops: int = 0  # outermost writes begun
    commits: int = 0  # outermost writes committed
    dead: bool = False
    on_death: Callable[[], Any] | None = None

    def die(self, why: str) -> None:
        self.dead = True
        if self.exit_code is not None:
            os._exit(self.exit_code)
        if self.on_death is not None:
            self.on_death()
        raise SimulatedCrash(why)

    def check_alive(self) -> None:
        if self.dead:
            raise SimulatedCrash("this process is already dead")


def instrument(store: Any, plan: FaultPlan) -> None:
    """Route `store.write` (and so every fenced view copied from it) through `plan`."""
    original = type(store).write

    @contextmanager
    def write() -> Iterator[sqlite3.Connection]:
        plan.check_alive()
        if store.db.conn.in_transaction:  # nested: part of the outer operation
            with original(store) as conn:
                yield conn
            return
        plan.ops += 1
        n = plan.ops
        with original(store) as conn:
            yield conn
            plan.check_alive()  # died while this transaction was open: it never commits
            if n in plan.flaky:
                raise sqlite3.OperationalError(f"database is locked (injected at write {n})")
            if plan.crash_at == n and plan.where == BEFORE_COMMIT:
                plan.die(f"crash before the commit of write {n}")
        plan.commits += 1
        if plan.crash_at == n and plan.where == AFTER_COMMIT:
            plan.die(f"crash after the commit of write {n}")

    store.write = write
