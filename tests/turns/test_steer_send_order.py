"""Steers to one turn are applied or handed back in the order they were sent, and none
vanish — also when the store refuses the hand-back write, or the turn's own finalize, so
the turn ends with an error instead of a result carrying its hand-back."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.runtime.runtime import Runtime
from atomic_agent.sessions.store_errors import SessionStoreLockedError
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime
from tests.turns.turn_kit import answering, users

LATE = ("first late", "second late", "third late")


def steering_late(holder: dict[str, Any]) -> ScriptedProvider:
    """Answers every turn; during the reply of the turn `late start`, accepts LATE as steers
    (in that order): they arrive too late to be folded in and are handed back."""
    def provider(request: Any) -> str:
        if "steered" not in holder and "user: late start" in request.prompt:
            holder["steered"] = [holder["rt"].steer(holder["sid"], text).steered for text in LATE]
            return calls(("reply", {"text": "bye"}))
        return answering(request)

    return ScriptedProvider([], default=provider)  # type: ignore[arg-type]


def still_queued(path: Path) -> list[str]:
    with sqlite3.connect(path) as other:  # only what was committed
        return [r[0] for r in other.execute("select text from steer_queue order by steer_id")]


def refused(path: Path) -> SessionStoreLockedError:
    return SessionStoreLockedError(f"{path} is locked by another process (test)")


async def settle(rt: Runtime) -> None:
    """Let the turns made of requeued steers run to their end."""
    while rt.lifecycle.unattended:
        await asyncio.gather(*rt.lifecycle.unattended, return_exceptions=True)


async def late_steers_run(tmp_path: Path) -> tuple[Runtime, str, dict[str, Any]]:
    holder: dict[str, Any] = {}
    rt = make_runtime(tmp_path, steering_late(holder))
    sid = rt.open_session(None, tmp_path).id
    holder.update(rt=rt, sid=sid)
    return rt, sid, holder


async def test_steers_to_one_turn_keep_send_order_when_their_hand_back_write_is_refused(tmp_path: Path):
    rt, sid, holder = await late_steers_run(tmp_path)
    queue = rt.lifecycle.steers

    def refuse(steer_ids: Any, turn_id: str) -> list[int]:  # BEGIN IMMEDIATE timed out: nothing written
        raise refused(rt.sessions.path)

    queue.hand_back = refuse  # type: ignore[method-assign]
    with pytest.raises(SessionStoreLockedError):
        await rt.run_turn("late start", session_id=sid)
    assert holder["steered"] == [True, True, True]
    assert not rt.inbox.is_open(sid)  # the ended turn's window takes no more steers
    del queue.hand_back
    await settle(rt)
    # the turn's caller got the error, not the steers: each became a turn, in send order
    assert users(rt, sid) == ["late start", *LATE]
    assert still_queued(rt.sessions.path) == []
    await rt.close()


async def test_steers_to_one_turn_keep_send_order_when_its_finalize_is_refused(tmp_path: Path):
    rt, sid, holder = await late_steers_run(tmp_path)
    ledger = rt.lifecycle.ledger

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise refused(rt.sessions.path)

    ledger.finalize = refuse  # type: ignore[method-assign]
    with pytest.raises(SessionStoreLockedError):
        await rt.run_turn("late start", session_id=sid)
    assert holder["steered"] == [True, True, True]
    # a window left open would take the next turn's steers under this dead turn's id
    assert not rt.inbox.is_open(sid)
    del ledger.finalize
    await settle(rt)
    assert users(rt, sid) == ["late start", *LATE]
    assert still_queued(rt.sessions.path) == []
    after = await rt.run_turn("and then", session_id=sid)
    assert after.status == "done" and users(rt, sid)[-1] == "and then"
    await rt.close()
