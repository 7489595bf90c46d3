"""Worktree mode through the real runtime and CLI: a turn's multi-file edit (fs tools and a
boxed shell command) lands in the session's git worktree, not the workspace; the next step's
prompt shows the diff; `atomic-agent sandbox apply` brings it back and `discard` drops it."""

from __future__ import annotations

import importlib
import subprocess
from pathlib import Path

from click.testing import Result
from typer.testing import CliRunner

from atomic_agent.cli.cli_state import CliState
from atomic_agent.cli.main import build_app
from atomic_agent.runtime.boot_context import boot
from atomic_agent.testing.runtime_kit import fresh_plugin_host
from atomic_agent.testing.scripted_provider import calls, prompts
from tests.plugins.sandbox.sandbox_kit import sandbox_runtime, shell

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@localhost", "-c", "commit.gpgsign=false"]
WORKTREE_MODE = {"mode": "auto", "worktree": True}


def git(repo: Path, *args: str) -> str:
    return subprocess.run([*GIT, *args], cwd=repo, capture_output=True, text=True, check=True).stdout


def make_repo(path: Path) -> Path:
    (path / "docs").mkdir(parents=True)
    (path / "a.txt").write_text("alpha\n")
    (path / "docs" / "b.txt").write_text("beta\n")
    git(path, "init", "-q")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "start")
    (path / "a.txt").write_text("alpha\nlocal edit\n")  # uncommitted: the worktree starts from it too
    (path / "notes.txt").write_text("untracked\n")
    return path


def workspace_snapshot(ws: Path) -> dict[str, str]:
    return {str(p.relative_to(ws)): p.read_text() for p in sorted(ws.rglob("*")) if p.is_file() and ".git" not in p.parts}


EDITS = [calls(("os.fs.write", {"path": "new.txt", "content": "fresh\n"})),
         calls(("os.fs.edit", {"path": "a.txt", "old": "alpha", "new": "ALPHA"})),
         shell("rm", ["docs/b.txt"]),
         shell("echo more >> notes.txt")]


async def edit_in_worktree(tmp_path: Path) -> tuple[Path, str, list[str]]:
    ws = make_repo(tmp_path / "ws")
    rt, asked, provider = sandbox_runtime(tmp_path, EDITS, level=2, sandbox=WORKTREE_MODE)
    session = rt.open_session(None, ws)
    events: list[dict] = []
    try:
        await rt.run_turn("edit three files", session_id=session.id, on_event=events.append, working_dir=ws)
    finally:
        await rt.close()
    results = [e for e in events if e.get("type") == "tool_call_result" and e.get("tool") != "reply"]
    assert [r["status"] for r in results] == ["ok"] * 4, [r["summary"] for r in results]
    assert asked == []
    return ws, session.id, list(prompts(provider))


def cli(tmp_path: Path, *args: str) -> Result:
    host = fresh_plugin_host()
    host.register(importlib.import_module("atomic_agent.plugins.sandbox"), "sandbox")
    ctx = boot(tmp_path / "state", environ={}, host=host)
    app = build_app(CliState(host=host, boot_context=ctx, boot_error=None, state_dir=ctx.state_dir))
    return CliRunner().invoke(app, list(args))  # type: ignore[arg-type]


EXPECTED_AFTER = {"a.txt": "ALPHA\nlocal edit\n", "new.txt": "fresh\n", "notes.txt": "untracked\nmore\n"}


async def test_a_turns_edits_land_in_the_worktree_and_apply_brings_them_back(tmp_path: Path) -> None:
    ws, session_id, sent = await edit_in_worktree(tmp_path)
    before = {"a.txt": "alpha\nlocal edit\n", "docs/b.txt": "beta\n", "notes.txt": "untracked\n"}
    assert workspace_snapshot(ws) == before  # nothing reached the workspace yet
    worktree = tmp_path / "state" / "worktrees" / session_id
    assert workspace_snapshot(worktree) == EXPECTED_AFTER
    # the step after the edits shows the diff in the prompt, with how to apply it
    assert "### worktree" in sent[-1] and "+fresh" in sent[-1] and f"sandbox apply {session_id}" in sent[-1]
    assert "### worktree" not in sent[0]

    shown = cli(tmp_path, "sandbox", "diff", session_id)
    assert shown.exit_code == 0 and "-beta" in shown.output and "+ALPHA" in shown.output
    listed = cli(tmp_path, "sandbox", "list", "--json")
    assert listed.exit_code == 0 and session_id in listed.output

    applied = cli(tmp_path, "sandbox", "apply", session_id)
    assert applied.exit_code == 0, applied.output
    assert workspace_snapshot(ws) == EXPECTED_AFTER
    assert not worktree.exists() and len(git(ws, "worktree", "list").splitlines()) == 1
    again = cli(tmp_path, "sandbox", "apply", session_id)
    assert again.exit_code != 0 and "has no worktree" in again.output


async def test_discard_drops_the_worktree_and_leaves_the_workspace_as_it_was(tmp_path: Path) -> None:
    ws, session_id, _ = await edit_in_worktree(tmp_path)
    before = workspace_snapshot(ws)
    discarded = cli(tmp_path, "sandbox", "discard", session_id)
    assert discarded.exit_code == 0 and "4 changed file(s)" in discarded.output
    assert workspace_snapshot(ws) == before
    assert not (tmp_path / "state" / "worktrees" / session_id).exists()
    assert len(git(ws, "worktree", "list").splitlines()) == 1


async def test_apply_refuses_when_the_workspace_changed_the_same_lines(tmp_path: Path) -> None:
    ws, session_id, _ = await edit_in_worktree(tmp_path)
    (ws / "a.txt").write_text("someone else\n")
    refused = cli(tmp_path, "sandbox", "apply", session_id)
    assert refused.exit_code != 0 and "do not apply" in refused.output and "Nothing was changed" in refused.output
    assert (ws / "a.txt").read_text() == "someone else\n" and not (ws / "new.txt").exists()
    assert (tmp_path / "state" / "worktrees" / session_id).is_dir()  # kept, for a diff or a discard


async def test_worktree_mode_outside_a_git_repository_is_a_clear_tool_error(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    rt, _, _ = sandbox_runtime(tmp_path, [calls(("os.fs.write", {"path": "x.txt", "content": "x"}))], level=2,
                               sandbox=WORKTREE_MODE)
    events: list[dict] = []
    try:
        await rt.run_turn("write", on_event=events.append, working_dir=ws)
    finally:
        await rt.close()
    [result] = [e for e in events if e.get("type") == "tool_call_result" and e.get("tool") == "os.fs.write"]
    assert result["status"] == "error" and "git init" in result["summary"] and not (ws / "x.txt").exists()
