"""A batch's calls are committed before any runs, and on disk before any call that must not run
twice; results commit strictly in call order; a turn that fails or is cancelled settles its
own calls, and a failure leaves a note."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.hook_records import ResourceClass, ToolResult, ToolSpec
from atomic_agent.hookspecs import hookimpl
from atomic_agent.sessions.session_store import SessionStore
from atomic_agent.sessions.unanswered_calls import unanswered_calls
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls
from tests.agent.loop_harness import ToolLog, make_runtime, until

OBJ = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


class PeekTool:
    """`p.peek` reads the session database through its own connection while it runs."""

    __test__ = False

    def __init__(self) -> None:
        self.seen: list[list[tuple[str, str | None]]] = []

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        async def peek(args: Mapping[str, Any], ctx: Any) -> ToolResult:
            other = SessionStore(ctx.state_dir)  # another reader, as another process would be
            try:
                self.seen.append([(e.kind, e.tool) for e in other.entries(ctx.session_id)])
            finally:
                other.close()
            return ToolResult.ok("peeked")

        return [ToolSpec("p.peek", "Look at the database.", OBJ, ResourceClass.PURE_READ, peek)]


async def test_batch_is_committed_before_any_call_runs(tmp_path: Path):
    peek = PeekTool()
    provider = ScriptedProvider([calls(("p.peek", {"path": "a"}), ("t.store", {"path": "b"})),
                                 calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, extra=[(peek, "peek")])
    await rt.run_turn("go", working_dir=tmp_path)
    (seen,) = peek.seen
    assert ("assistant_tool_call", "p.peek") in seen  # its own call row
    assert ("assistant_tool_call", "t.store") in seen  # and its sibling's, before either ran
    assert not any(kind == "tool_result" for kind, _ in seen)
    await rt.close()


class DiskWatch:
    """`w.read` (durable: may run twice) and `w.write` (not durable) note, as they start,
    whether the session store still owes an fsync."""

    __test__ = False

    def __init__(self) -> None:
        self.pending_at_start: dict[str, bool] = {}
        self.store: Any = None

    @hookimpl
    def register_tools(self, runtime: Any) -> list[ToolSpec]:
        def note(name: str) -> Any:
            async def run(args: Mapping[str, Any], ctx: Any) -> ToolResult:
                self.pending_at_start[name] = self.store.group.pending
                return ToolResult.ok(name)
            return run

        return [ToolSpec("w.read", "Read.", OBJ, ResourceClass.PURE_READ, note("w.read"), durable=True),
                ToolSpec("w.write", "Write.", OBJ, ResourceClass.FS_WRITE, note("w.write"))]


async def test_a_call_that_must_not_run_twice_waits_for_its_record_on_disk(tmp_path: Path):
    watch = DiskWatch()
    provider = ScriptedProvider([calls(("w.write", {"path": "a"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, extra=[(watch, "watch")])
    watch.store = rt.sessions
    await rt.run_turn("go", working_dir=tmp_path)
    assert watch.pending_at_start == {"w.write": False}
    await rt.close()


async def test_a_batch_of_calls_that_may_run_twice_starts_without_waiting_for_the_disk(tmp_path: Path):
    """Its record is committed (a crash keeps it) but not yet fsynced: a power cut that took it
    would only make the turn run these reads again, which their tools allow; the next durable
    commit (here the finalize) covers it, and the reply is heard only after that one."""
    watch = DiskWatch()
    provider = ScriptedProvider([calls(("w.read", {"path": "a"})), calls(("reply", {"text": "ok"}))])
    rt = make_runtime(tmp_path, provider, extra=[(watch, "watch")])
    watch.store = rt.sessions
    fsyncs = rt.sessions.group.fsyncs
    result = await rt.run_turn("go", working_dir=tmp_path)
    assert watch.pending_at_start == {"w.read": True} and result.status == "done"
    assert rt.sessions.group.fsyncs - fsyncs == 2 and not rt.sessions.group.pending  # the admission's, the finalize's
    await rt.close()


async def test_results_commit_in_call_order_even_when_a_later_call_finishes_first(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.read", {"path": "slow"}), ("t.read", {"path": "fast"})),
                                 calls(("reply", {"text": "ok"}))])
    log = ToolLog()
    release = log.hold("slow")
    rt = make_runtime(tmp_path, provider, log)
    session = rt.open_session(None, tmp_path)
    task = asyncio.ensure_future(rt.run_turn("go", session_id=session.id))
    await until(lambda: [path for _, path, _ in log.finished] == ["fast"])  # "fast" has finished, "slow" has not
    await asyncio.sleep(0.05)  # room for a wrong early commit of fast's result to land ("slow" is held: no race)
    other = SessionStore(rt.state_dir)
    mid = other.entries(session.id)
    assert [e.kind for e in mid][-2:] == ["assistant_tool_call", "assistant_tool_call"]  # fast's result waits
    release.set()
    await task
    results = [e for e in other.entries(session.id) if e.kind == "tool_result"]
    assert [(r.batch_index, r.text) for r in results] == [(0, "contents of slow"), (1, "contents of fast")]
    assert results[0].seq < results[1].seq
    other.close()
    await rt.close()


async def test_failed_turn_settles_its_own_calls_and_leaves_a_failure_note(tmp_path: Path, monkeypatch):
    provider = ScriptedProvider([calls(("t.read", {"path": "a"}), ("t.store", {"path": "b"}))],
                                default=calls(("reply", {"text": "sorry"})))
    rt = make_runtime(tmp_path, provider)
    real_append = SessionStore.append

    def full_disk_for_results(self, state, entries, **kw):  # type: ignore[no-untyped-def]
        if any(e.kind == "tool_result" for e in entries):
            raise OSError("No space left on device")
        return real_append(self, state, entries, **kw)

    monkeypatch.setattr(SessionStore, "append", full_disk_for_results)
    result = await rt.run_turn("go", working_dir=tmp_path)
    monkeypatch.setattr(SessionStore, "append", real_append)
    assert result.status == "failed"
    entries = rt.sessions.load(result.session_id).entries
    assert unanswered_calls(entries) == []
    results = [e for e in entries if e.kind == "tool_result"]
    assert [(r.tool, r.status) for r in results] == [("t.read", "error"), ("t.store", "error")]
    note = next(e for e in entries if e.kind == "failure_note")
    assert note.text.startswith("The last turn failed: ") and "No space left on device" in note.text
    assert entries.index(note) > entries.index(results[-1])
    await rt.run_turn("again", session_id=result.session_id)
    assert "system: The last turn failed: " in provider.requests[-1].prompt  # the next inference sees it
    await rt.close()


async def test_task_cancelled_mid_batch_settles_its_calls_as_cancelled(tmp_path: Path):
    provider = ScriptedProvider([calls(("t.hang", {"path": "x"}), ("t.read", {"path": "y"}))])
    log = ToolLog()
    rt = make_runtime(tmp_path, provider, log)
    session = rt.open_session(None, tmp_path)
    task = asyncio.ensure_future(rt.run_turn("go", session_id=session.id))
    await log.running("x")
    await until(lambda: bool(log.finished))  # t.hang runs, the read has finished
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    entries = rt.sessions.load(session.id).entries
    assert unanswered_calls(entries) == []
    assert [e.status for e in entries if e.kind == "tool_result"] == ["cancelled", "ok"]
    assert not any(e.kind == "failure_note" for e in entries)  # the user chose to stop: no note
    await rt.close()
