"""A store that fails for longer than a turn's start tries: the caller is told, and the
message it admitted is still answered once the store is back, with no new message needed
(the turn is run in the background, as the next start would run it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.sessions.store_errors import SessionStoreError
from atomic_agent.turns import turn_lifecycle
from atomic_agent.turns.turn_states import COMPLETED
from tests.agent.loop_harness import make_runtime
from tests.turns.turn_kit import answering_provider, replies, users


class _Outage:
    """Makes the ledger's start fail like an unreachable database until `end()`."""

    def __init__(self, ledger: Any) -> None:
        self.down = True
        self.tries = 0
        self._start = ledger.start

        def start(*args: Any, **kwargs: Any) -> Any:
            self.tries += 1
            if self.down:
                raise SessionStoreError("the database is unreachable (connection refused)")
            return self._start(*args, **kwargs)

        ledger.start = start

    def end(self) -> None:
        self.down = False


async def _until(check: Any, timeout_s: float = 30.0) -> None:  # a hung-test net
    for _ in range(int(timeout_s / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out")


async def test_a_turn_whose_start_outlasted_its_tries_is_answered_once_the_store_is_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_lifecycle, "START_RETRY_S", (0.01, 0.01))
    monkeypatch.setattr(turn_lifecycle, "SETTLE_RETRY_S", (0.05, 0.1))
    runtime = make_runtime(tmp_path, answering_provider())
    sid = runtime.open_session(None, tmp_path).id
    outage = _Outage(runtime.lifecycle.ledger)
    with pytest.raises(SessionStoreError, match="unreachable"):
        await runtime.run_turn("are you there", session_id=sid)
    assert outage.tries == 3 and replies(runtime, sid) == []
    (turn,) = runtime.lifecycle.ledger.in_state("queued")  # admitted before the start failed: kept
    await _until(lambda: outage.tries > 3)  # the store stays down a while: the background keeps looking
    assert replies(runtime, sid) == []
    outage.end()
    await _until(lambda: replies(runtime, sid) == ["re: are you there"])
    assert runtime.lifecycle.ledger.get(turn.turn_id).state == COMPLETED
    assert users(runtime, sid) == ["are you there"]
    await asyncio.sleep(0.3)
    assert replies(runtime, sid) == ["re: are you there"]  # answered once
    await runtime.close()


async def test_a_turn_answered_by_a_later_message_is_not_run_again_in_the_background(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_lifecycle, "START_RETRY_S", (0.01,))
    monkeypatch.setattr(turn_lifecycle, "SETTLE_RETRY_S", (0.2,))  # the next message comes first
    runtime = make_runtime(tmp_path, answering_provider())
    sid = runtime.open_session(None, tmp_path).id
    outage = _Outage(runtime.lifecycle.ledger)
    with pytest.raises(SessionStoreError):
        await runtime.run_turn("first", session_id=sid)
    outage.end()
    await runtime.run_turn("second", session_id=sid)
    assert replies(runtime, sid) == ["re: first", "re: second"]  # the lane stayed FIFO
    assert runtime.lifecycle.ledger.in_state("queued") == []
    await asyncio.sleep(0.3)  # its background look, when it comes, finds it answered
    assert replies(runtime, sid) == ["re: first", "re: second"]
    await runtime.close()


async def test_a_stop_leaves_the_unstarted_turn_queued_for_the_next_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(turn_lifecycle, "START_RETRY_S", (0.01,))
    monkeypatch.setattr(turn_lifecycle, "SETTLE_RETRY_S", (0.05,))
    runtime = make_runtime(tmp_path, answering_provider())
    sid = runtime.open_session(None, tmp_path).id
    _Outage(runtime.lifecycle.ledger)
    with pytest.raises(SessionStoreError):
        await runtime.run_turn("kept", session_id=sid)
    await runtime.close()
    second = make_runtime(tmp_path, answering_provider())
    report = await second.recover(resume=True)
    await asyncio.gather(*report.results)
    assert replies(second, sid) == ["re: kept"]
    await second.close()
