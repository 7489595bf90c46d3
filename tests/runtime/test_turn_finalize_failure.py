"""A turn whose final write fails (a full disk) never leaves its lane stuck: the finalize is
tried once more, and if it still fails the turn ends `interrupted` and the next turn runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from atomic_agent.sessions.store_errors import SessionStoreFullError
from tests.agent.loop_harness import make_runtime
from tests.turns.turn_kit import answering_provider, replies


def _full_disk_on_finalize(monkeypatch: pytest.MonkeyPatch, rt: Any, failures: int) -> list[int]:
    """The next `failures` finalize writes fail the way a full disk makes them fail."""
    ledger = rt.lifecycle.ledger
    real = ledger.finalize
    attempts: list[int] = []

    def finalize(*args: Any, **kwargs: Any) -> None:
        attempts.append(1)
        if len(attempts) <= failures:
            raise SessionStoreFullError(f"{rt.sessions.path} cannot grow: the disk is full (simulated)")
        real(*args, **kwargs)

    monkeypatch.setattr(ledger, "finalize", finalize)
    return attempts


async def test_a_final_write_that_fails_once_is_retried_and_the_turn_completes(tmp_path: Path,
                                                                                monkeypatch: pytest.MonkeyPatch):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    attempts = _full_disk_on_finalize(monkeypatch, rt, failures=1)
    result = await rt.run_turn("hello", session_id=sid)
    assert (result.state, len(attempts)) == ("completed", 2)
    assert [t.state for t in rt.lifecycle.ledger.lane(sid)] == ["completed"]
    await rt.close()


async def test_a_final_write_that_keeps_failing_ends_the_turn_interrupted_and_frees_the_lane(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    _full_disk_on_finalize(monkeypatch, rt, failures=2)
    with pytest.raises(SessionStoreFullError):  # the caller still hears that the answer is not durable
        await rt.run_turn("on a full disk", session_id=sid)
    ledger = rt.lifecycle.ledger
    stuck = ledger.lane(sid)[0]
    assert (stuck.state, stuck.generation) == ("interrupted", 2)  # fenced: the old writer can write nothing
    assert ledger.audit_rows(stuck.turn_id)[-1]["reason"].startswith("the turn's final write failed")
    after = await rt.run_turn("space was freed", session_id=sid)  # the lane is not stuck until a restart
    assert after.state == "completed" and replies(rt, sid)[-1] == "re: space was freed"
    await rt.close()


async def test_a_turn_left_running_by_a_failed_fallback_is_taken_over_by_the_next_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    rt = make_runtime(tmp_path, answering_provider())
    sid = rt.open_session(None, tmp_path).id
    _full_disk_on_finalize(monkeypatch, rt, failures=2)

    def still_full(*_args: Any) -> bool:
        raise SessionStoreFullError("still full (simulated)")

    monkeypatch.setattr(rt.lifecycle.ledger, "interrupt_unfinalized", still_full)
    with pytest.raises(SessionStoreFullError):
        await rt.run_turn("on a full disk", session_id=sid)
    assert [t.state for t in rt.lifecycle.ledger.lane(sid)] == ["running"]  # nothing could be written
    after = await rt.run_turn("space was freed", session_id=sid)
    assert after.state == "completed"
    assert [t.state for t in rt.lifecycle.ledger.lane(sid)] == ["interrupted", "completed"]
    await rt.close()
