"""Fault injection at the one seam every sessions.sqlite write goes through: `SessionStore.write`.

Each outermost `write()` is one operation (nested ones join it). A plan can kill the
process at operation N — just before its COMMIT (the transaction rolls back, as the OS would
on a real death) or just after it (durable, but the caller never learned) — or make chosen
operations fail with `sqlite3.OperationalError` while the process keeps running (flaky store).
Once dead, every later write of that store raises too: a zombie coroutine of a dead process
must never reach the disk.

A plan may aim at one kind of write instead of counting all of them (`target`): the kind
is read from the SQL the transaction actually ran (a trace callback on the store's
connection), not from which product function called — so an admission split in two, or
a steer recorded apart from its claim, is still recognised by what it wrote.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import attrs

BEFORE_COMMIT = "before_commit"
AFTER_COMMIT = "after_commit"
ADMISSION = "admission"  # inserts a turn into the ledger
STEER_DELIVERY = "steer_delivery"  # appends a steer as a user row of the conversation
STEER_CLAIM = "steer_claim"  # deletes from the steering queue
STEER_HAND_BACK = "steer_hand_back"  # marks steers handed back at a turn's end (they stay queued)
WRITE_KINDS = (ADMISSION, STEER_DELIVERY, STEER_CLAIM, STEER_HAND_BACK)


def write_kinds(statements: list[str]) -> set[str]:
    """What a transaction did, from its expanded SQL (sqlite3 traces bound values inline)."""
    kinds = set()
    for sql in statements:
        head = sql.lstrip().lower()
        if head.startswith("insert into turns "):
            kinds.add(ADMISSION)
        elif head.startswith("insert into transcript ") and "'user', 'steer-" in sql:
            kinds.add(STEER_DELIVERY)
        elif head.startswith("delete from steer_queue "):
            kinds.add(STEER_CLAIM)
        elif head.startswith("update steer_queue set handed_back"):
            kinds.add(STEER_HAND_BACK)
    return kinds


class SimulatedCrash(BaseException):
    """The process died here. BaseException, so `except Exception` in runtime code cannot swallow it."""


@attrs.define
class FaultPlan:
    crash_at: int | None = None  # 1-based index of the outermost write (of kind `target`) at which to die
    target: str | None = None  # count only writes of this kind (WRITE_KINDS); None: every write
    where: str = BEFORE_COMMIT
    flaky: frozenset[int] = frozenset()  # write indexes that fail with OperationalError (process lives on)
    exit_code: int | None = None  # subprocess tier: die with os._exit(code) instead of raising
    signal_at: int | None = None  # graceful-stop tier: send this process a real SIGTERM after write N commits
    ops: int = 0  # outermost writes begun
    commits: int = 0  # outermost writes committed
    targeted: int = 0  # outermost writes of kind `target` seen
    statements: list[str] = attrs.field(factory=list)  # SQL of the open outermost write
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
    if plan.target is not None:
        store.conn.set_trace_callback(plan.statements.append)

    @contextmanager
    def write(*, durable: bool = True) -> Iterator[Any]:
        plan.check_alive()
        if _in_transaction(store):  # nested: part of the outer operation
            with original(store, durable=durable) as conn:
                yield conn
            return
        plan.ops += 1
        n = plan.ops
        plan.statements.clear()
        hit = False
        with original(store, durable=durable) as conn:
            yield conn
            plan.check_alive()  # died while this transaction was open: it never commits
            if n in plan.flaky:
                raise sqlite3.OperationalError(f"database is locked (injected at write {n})")
            hit = _is_the_one(plan, n)
            if hit and plan.where == BEFORE_COMMIT:
                plan.die(f"crash before the commit of write {n} ({plan.target or 'any'})")
        plan.commits += 1
        if plan.signal_at == n:
            os.kill(os.getpid(), signal.SIGTERM)  # delivered to the loop's handler: a graceful stop begins
        if hit and plan.where == AFTER_COMMIT:
            plan.die(f"crash after the commit of write {n} ({plan.target or 'any'})")

    store.write = write


def _in_transaction(store: Any) -> bool:
    """Is a transaction open on `store` (SQLite: its connection; PostgreSQL: its unit of work)?"""
    unit_of_work = getattr(store, "db", None)
    return bool(store.conn.in_transaction if unit_of_work is None else unit_of_work.in_transaction)


def _is_the_one(plan: FaultPlan, n: int) -> bool:
    """Is write `n` (its statements in `plan.statements`) the one the plan dies at?"""
    if plan.target is None:
        return plan.crash_at == n
    if plan.target not in write_kinds(plan.statements):
        return False
    plan.targeted += 1
    return plan.crash_at == plan.targeted
