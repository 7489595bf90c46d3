"""After a turn that changed the session's worktree the person is shown a `turn_notice`: a
compact diffstat of what waits and the commands to see, apply or discard it, emitted before
`turn_finished`; a turn that changed nothing there shows nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from atomic_agent.testing.scripted_provider import calls
from tests.plugins.sandbox.sandbox_kit import sandbox_runtime
from tests.plugins.sandbox.test_session_worktree import EDITS, WORKTREE_MODE, make_repo, workspace_snapshot


def notices(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "turn_notice"]


async def test_a_turn_that_edits_the_worktree_ends_with_a_diffstat_notice_and_the_commands(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    before = workspace_snapshot(ws)
    script = [*EDITS, calls(("reply", {"text": "done"})), calls(("reply", {"text": "nothing to do"}))]
    rt, _, _ = sandbox_runtime(tmp_path, script, level=2, sandbox=WORKTREE_MODE)
    session = rt.open_session(None, ws)
    first: list[dict[str, Any]] = []
    second: list[dict[str, Any]] = []
    try:
        await rt.run_turn("edit three files", session_id=session.id, on_event=first.append, working_dir=ws)
        await rt.run_turn("anything else?", session_id=session.id, on_event=second.append, working_dir=ws)
    finally:
        await rt.close()
    [notice] = notices(first)
    kinds = [e["type"] for e in first]
    assert kinds.index("assistant_reply") < kinds.index("turn_notice") < kinds.index("turn_finished")
    assert notice["source"] == "sandbox-worktree" and notice["sessionId"] == session.id
    text = notice["text"]
    for name in ("a.txt", "new.txt", "notes.txt", "docs/b.txt"):
        assert name in text, text
    assert "4 files changed" in text
    for verb in ("diff", "apply", "discard"):
        assert f"atomic-agent sandbox {verb} {session.id}" in text
    assert "@@" not in text and "+fresh" not in text  # a diffstat, not the diff
    assert workspace_snapshot(ws) == before  # still only in the worktree
    assert notices(second) == []  # the second turn changed nothing there


async def test_without_worktree_mode_no_turn_shows_a_worktree_notice(tmp_path: Path) -> None:
    ws = make_repo(tmp_path / "ws")
    rt, _, _ = sandbox_runtime(tmp_path, [calls(("os.fs.write", {"path": "new.txt", "content": "x\n"}))], level=2,
                               sandbox={"mode": "off", "worktree": False})
    events: list[dict[str, Any]] = []
    try:
        await rt.run_turn("write", on_event=events.append, working_dir=ws)
    finally:
        await rt.close()
    assert (ws / "new.txt").read_text() == "x\n" and notices(events) == []


def test_a_long_diffstat_is_capped_and_says_how_many_files_it_left_out(tmp_path: Path) -> None:
    from atomic_agent.plugins.sandbox.session_worktree import open_worktree
    from atomic_agent.plugins.sandbox.worktree_notice import STAT_FILES, WorktreeNotices

    ws = make_repo(tmp_path / "ws")
    state = tmp_path / "state"
    shown = WorktreeNotices(state)
    shown.turn_began("s1")
    record = open_worktree(state, "s1", ws)
    for i in range(STAT_FILES + 5):
        (Path(record.worktree) / f"f{i:02}.txt").write_text(f"{i}\n")
    [text] = shown.turn_ended("s1")
    assert "… and 5 more file(s)" in text and f"{STAT_FILES + 5} files changed" in text
    assert len(text.splitlines()) == STAT_FILES + 5
