"""A turn stopped while it waits on an approval leaves nothing behind: its durable record is
withdrawn (cancelled, saying why) instead of staying pending for every surface to show and for
someone to answer, and nothing runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

from atomic_agent.api import ScriptedProvider, runtime_for_test
from atomic_agent.approval.approval_records import CANCELLED, PENDING
from atomic_agent.testing.scripted_provider import calls
from tests.agent.loop_harness import TestToolsPlugin, ToolLog


async def test_stopping_a_turn_that_waits_on_an_approval_withdraws_its_record(tmp_path: Path) -> None:
    asked = asyncio.Event()

    async def never_answers(_request: object) -> object:
        asked.set()
        await asyncio.Event().wait()  # a host whose person walked away
        raise AssertionError("not reached")

    log = ToolLog()
    runtime = await runtime_for_test(tmp_path / "state", plugins={"tools": TestToolsPlugin(log)},
                                     provider=ScriptedProvider([calls(("t.gated", {"path": "rm -rf build"})),
                                                                calls(("reply", {"text": "done"}))]),
                                     ask=never_answers)
    try:
        turn = asyncio.create_task(runtime.run_turn("clean up", working_dir=tmp_path))
        await asyncio.wait_for(asked.wait(), 10)
        records = runtime.gate.records
        pending = records.find((PENDING,))
        assert len(pending) == 1
        session_id = pending[0].session_id
        assert runtime.stop(session_id)
        result = await asyncio.wait_for(turn, 10)
        assert result.status in ("stopped", "cancelled")
        record = records.get(pending[0].id)
        assert record.state == CANCELLED and "stopped" in (record.answer_text or "")
        assert records.find((PENDING,)) == []
        assert not [c for c in log.started if c[0] == "t.gated"]  # nothing ran
    finally:
        await runtime.close()
