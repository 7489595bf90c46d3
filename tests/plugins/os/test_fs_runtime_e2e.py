"""The fs tools through the real agent loop: a read-only batch, a gated write answered by the host."""

from __future__ import annotations

from atomic_agent.api import ApprovalAnswer
from atomic_agent.testing.scripted_provider import calls
from tests.plugins.os.fs_kit import AskRecorder
from tests.plugins.os.fs_runtime_kit import os_runtime, tool_results


def _world(tmp_path, monkeypatch):
    home = tmp_path.resolve() / "home"
    ws, state = home / "ws", home / ".state"
    ws.mkdir(parents=True)
    state.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home, ws, state


async def test_read_only_batch_runs_in_one_step(tmp_path, monkeypatch) -> None:
    _, ws, state = _world(tmp_path, monkeypatch)
    for name in ("a", "b", "c"):
        (ws / f"{name}.txt").write_text(f"content of {name}\n")
    script = [calls(("os.fs.read", {"path": "a.txt"}), ("os.fs.read", {"path": "b.txt"}),
                    ("os.fs.grep", {"pattern": "content", "path": "."}), ("os.fs.list", {})),
              calls(("reply", {"text": "read them"}))]
    asker = AskRecorder()
    runtime = await os_runtime(state, script, asker)
    try:
        result = await runtime.run_turn("read my files", working_dir=ws)
        assert result.status == "done" and result.reply == "read them" and result.steps == 2
        results = tool_results(runtime, result.session_id)
        assert [r.tool for r in results] == ["os.fs.read", "os.fs.read", "os.fs.grep", "os.fs.list"]
        assert all(r.status == "ok" for r in results) and "content of b" in results[1].text
        assert "3 match(es) in 3 file(s)" in results[2].text
        assert asker.requests == []
    finally:
        await runtime.close()


async def test_gated_write_is_answered_through_the_ask_callback(tmp_path, monkeypatch) -> None:
    _, ws, state = _world(tmp_path, monkeypatch)
    script = [calls(("os.fs.write", {"path": "hello.txt", "content": "hi\n"})), calls(("reply", {"text": "ok"}))]
    asker = AskRecorder([ApprovalAnswer.once()])
    runtime = await os_runtime(state, script, asker)
    try:
        result = await runtime.run_turn("write hello", working_dir=ws)
        assert result.status == "done" and (ws / "hello.txt").read_text() == "hi\n"
        request = asker.requests[0]
        assert (request.tool, request.category, request.label, request.session_id) == (
            "os.fs.write", "fs_write_workspace", "file write · workspace", result.session_id)
    finally:
        await runtime.close()


async def test_denied_write_becomes_an_error_result_the_model_sees(tmp_path, monkeypatch) -> None:
    _, ws, state = _world(tmp_path, monkeypatch)
    script = [calls(("os.fs.write", {"path": "x.txt", "content": "x"})), calls(("reply", {"text": "denied"}))]
    runtime = await os_runtime(state, script, AskRecorder([ApprovalAnswer.deny()]))
    try:
        result = await runtime.run_turn("write x", working_dir=ws)
        (entry,) = tool_results(runtime, result.session_id)
        assert entry.status == "error" and "not approved (fs_write_workspace)" in entry.text
        assert not (ws / "x.txt").exists()
        second_prompt = runtime.provider.requests[1].prompt
        assert "not approved (fs_write_workspace)" in second_prompt
    finally:
        await runtime.close()


async def test_a_session_grant_silences_later_writes_in_that_session_only(tmp_path, monkeypatch) -> None:
    _, ws, state = _world(tmp_path, monkeypatch)
    script = [calls(("os.fs.write", {"path": "1.txt", "content": "1"})), calls(("reply", {"text": "a"})),
              calls(("os.fs.write", {"path": "2.txt", "content": "2"})), calls(("reply", {"text": "b"})),
              calls(("os.fs.write", {"path": "3.txt", "content": "3"})), calls(("reply", {"text": "c"}))]
    asker = AskRecorder([ApprovalAnswer.session()])
    runtime = await os_runtime(state, script, asker)
    try:
        first = await runtime.run_turn("one", working_dir=ws)
        await runtime.run_turn("two", session_id=first.session_id)
        assert len(asker.requests) == 1 and (ws / "2.txt").exists()
        other = await runtime.run_turn("three", working_dir=ws)  # a new session: no grant
        assert other.session_id != first.session_id and len(asker.requests) == 2 and not (ws / "3.txt").exists()
    finally:
        await runtime.close()


async def test_fs_tools_appear_in_the_prompt_by_tier(tmp_path, monkeypatch) -> None:
    _, ws, state = _world(tmp_path, monkeypatch)
    runtime = await os_runtime(state, [calls(("reply", {"text": "hi"}))])
    try:
        await runtime.run_turn("hi", working_dir=ws)
        prompt = runtime.provider.requests[0].prompt
        assert "os.fs.read(path: string, offset?: integer" in prompt  # frequent: full schema
        assert "os.fs.write(path: string, content: string" in prompt and "[asks approval]" in prompt
        assert "\nos.fs.hash\n" in prompt  # rare: one line, its name (tool.view shows the rest)
        assert "os.fs.hash(path" not in prompt
    finally:
        await runtime.close()


async def test_a_write_that_started_before_the_stop_is_recorded_as_written_not_cancelled(tmp_path, monkeypatch) -> None:
    import asyncio
    import threading

    from atomic_agent.plugins.os.fs import atomic_file_write

    _, ws, state = _world(tmp_path, monkeypatch)
    started, release = threading.Event(), threading.Event()
    real_write = atomic_file_write.write_file_atomic

    def slow_write(*args, **kwargs):  # the thread is inside the write when the user stops the turn
        started.set()
        release.wait(30)
        return real_write(*args, **kwargs)

    monkeypatch.setattr(atomic_file_write, "write_file_atomic", slow_write)  # write_tool imports it per call
    script = [calls(("os.fs.write", {"path": "hello.txt", "content": "hi\n"})), calls(("reply", {"text": "ok"}))]
    runtime = await os_runtime(state, script, AskRecorder([ApprovalAnswer.once()]))
    try:
        stop = asyncio.Event()
        turn = asyncio.ensure_future(runtime.run_turn("write hello", working_dir=ws, cancelled=stop))
        await asyncio.to_thread(started.wait, 30)
        stop.set()  # the user's stop, while the write is under way in its thread
        await asyncio.sleep(0.05)
        release.set()
        result = await asyncio.wait_for(turn, 30)
        assert result.status == "cancelled" and (ws / "hello.txt").read_text() == "hi\n"
        (written,) = tool_results(runtime, result.session_id)
        assert written.status == "ok" and "hello.txt" in written.text  # what happened, not "cancelled"
    finally:
        release.set()
        await runtime.close()
