"""A turn's admission and its answer are committed without waiting for the disk (group
commit), so nobody may hear of either before the shared fsync covering it has finished:
`turn_queued` only once the admission is on disk, the reply and `turn_finished` only once
the finalize is."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from atomic_agent.storage.group_commit import GroupSync, wal_fsync
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import make_runtime

ANNOUNCING = ("turn_queued", "assistant_reply", "turn_finished")


async def test_nothing_is_announced_while_a_commit_it_names_waits_for_its_fsync(tmp_path: Path) -> None:
    rt = make_runtime(tmp_path, ScriptedProvider(default=calls(("reply", {"text": "ok"}))))
    store: Any = rt.sessions
    real = wal_fsync(store.path)
    syncs: list[int] = []

    def counted() -> None:
        syncs.append(store.group.committed)
        real()

    store.group = GroupSync(counted)
    seen: list[tuple[str, bool]] = []
    sink = lambda event: seen.append((event["type"], store.group.pending))  # noqa: E731
    try:
        for i in range(3):  # one at a time: at each announcement no other turn has committed anything
            result = await rt.run_turn(f"hello {i}", working_dir=tmp_path, on_event=sink)
            assert result.status == "done"
        sequential = len(syncs)
        results = await asyncio.gather(*(rt.run_turn(f"hi {i}", working_dir=tmp_path) for i in range(8)))
    finally:
        await rt.close()
    announced = [(kind, pending) for kind, pending in seen if kind in ANNOUNCING]
    assert len(announced) == 9 and not any(pending for _, pending in announced), announced
    assert sequential == 2 * 3  # per turn: the admission's (with its new session) and the finalize's
    assert [r.status for r in results] == ["done"] * 8 and not store.group.pending
    assert len(syncs) - sequential < 2 * 8  # concurrent turns shared fsyncs
