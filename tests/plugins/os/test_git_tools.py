"""The read-only git tools against a real repository built in the test."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.api import make_tool_context
from atomic_agent.plugins.os.git.git_tools import git_tool_specs

GIT_ENV = {"GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.com", "GIT_COMMITTER_NAME": "Ada",
           "GIT_COMMITTER_EMAIL": "ada@example.com", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin"}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=GIT_ENV)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    (root / "a.txt").write_text("one\ntwo\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first commit", "-m", "with a body")
    (root / "a.txt").write_text("one\ntwo\nthree\n")
    (root / "b.txt").write_text("b\n")
    git(root, "add", "b.txt")
    git(root, "commit", "-q", "-am", "second: edit a, add b")
    git(root, "branch", "feature")
    return root


async def call(name: str, args: dict[str, Any], cwd: Path):  # noqa: ANN201
    class Bare:
        config = None

    spec = next(s for s in git_tool_specs(Bare()) if s.name == name)
    return await spec.run(args, make_tool_context(cwd))


async def test_status_parses_porcelain_v2(repo: Path) -> None:
    (repo / "a.txt").write_text("changed\n")
    (repo / "new file.txt").write_text("n")
    (repo / "b.txt").write_text("staged change\n")
    git(repo, "add", "b.txt")
    result = await call("os.git.status", {}, repo)
    assert result.status == "ok"
    assert result.details["branch"]["head"] == "main"
    by_path = {e["path"]: e for e in result.details["entries"]}
    assert by_path["a.txt"]["worktree"] == "modified" and by_path["a.txt"]["index"] == "unmodified"
    assert by_path["b.txt"]["index"] == "modified"
    assert by_path["new file.txt"]["kind"] == "untracked"
    assert "1 staged, 1 unstaged, 1 untracked" in result.summary


async def test_status_reports_a_rename_with_its_origin(repo: Path) -> None:
    git(repo, "mv", "b.txt", "c.txt")
    result = await call("os.git.status", {}, repo)
    entry = next(e for e in result.details["entries"] if e["kind"] == "renamed")
    assert entry["path"] == "c.txt" and entry["origPath"] == "b.txt"


async def test_status_does_not_write_the_index_lock(repo: Path) -> None:
    (repo / "a.txt").touch()
    before = (repo / ".git" / "index").stat().st_mtime_ns
    await call("os.git.status", {}, repo)
    assert (repo / ".git" / "index").stat().st_mtime_ns == before


async def test_log_uses_a_fixed_format(repo: Path) -> None:
    result = await call("os.git.log", {"limit": 5}, repo)
    commits = result.details["commits"]
    assert [c["subject"] for c in commits] == ["second: edit a, add b", "first commit"]
    assert commits[1]["body"] == "with a body" and commits[0]["author"] == "Ada"
    assert len(commits[0]["sha"]) == 40 and commits[0]["parents"] == [commits[1]["sha"]]


async def test_log_for_one_file(repo: Path) -> None:
    result = await call("os.git.log", {"file": "b.txt"}, repo)
    assert [c["subject"] for c in result.details["commits"]] == ["second: edit a, add b"]


async def test_diff_gives_counts_and_the_patch(repo: Path) -> None:
    (repo / "a.txt").write_text("one\n2\nthree\nfour\n")
    result = await call("os.git.diff", {}, repo)
    assert result.details["files"] == [{"path": "a.txt", "binary": False, "added": 2, "deleted": 1}]
    assert "+four" in result.details["patch"]


async def test_diff_staged_and_against_a_ref(repo: Path) -> None:
    (repo / "b.txt").write_text("b\nb2\n")
    git(repo, "add", "b.txt")
    staged = await call("os.git.diff", {"staged": True}, repo)
    assert [f["path"] for f in staged.details["files"]] == ["b.txt"]
    against = await call("os.git.diff", {"ref": "HEAD~1"}, repo)
    assert {f["path"] for f in against.details["files"]} == {"a.txt", "b.txt"}


async def test_show_gives_metadata_files_and_patch(repo: Path) -> None:
    result = await call("os.git.show", {"rev": "HEAD"}, repo)
    assert result.details["commit"]["subject"] == "second: edit a, add b"
    assert {f["path"] for f in result.details["files"]} == {"a.txt", "b.txt"}


async def test_blame_attributes_each_line(repo: Path) -> None:
    result = await call("os.git.blame", {"file": "a.txt"}, repo)
    lines = result.details["lines"]
    assert [ln["text"] for ln in lines] == ["one", "two", "three"]
    assert lines[0]["summary"] == "first commit" and lines[2]["summary"] == "second: edit a, add b"


async def test_blame_of_a_line_range(repo: Path) -> None:
    result = await call("os.git.blame", {"file": "a.txt", "start_line": 2, "end_line": 3}, repo)
    assert [ln["line"] for ln in result.details["lines"]] == [2, 3]


async def test_branch_lists_branches_and_the_current_one(repo: Path) -> None:
    result = await call("os.git.branch", {}, repo)
    assert {b["name"] for b in result.details["branches"]} == {"main", "feature"}
    assert result.details["current"] == "main"


async def test_outside_a_repository_is_a_clear_error(tmp_path: Path) -> None:
    result = await call("os.git.status", {}, tmp_path)
    assert result.status == "error" and "not inside a git repository" in result.summary


async def test_a_revision_that_looks_like_an_option_is_refused(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "written"
    result = await call("os.git.log", {"ref": f"--output={out}"}, repo)
    assert result.status == "error" and "not a revision" in result.summary
    assert not out.exists()


async def test_a_repository_fsmonitor_hook_is_never_executed(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    git(repo, "config", "diff.external", str(hook))
    await call("os.git.status", {}, repo)
    (repo / "a.txt").write_text("x\n")
    await call("os.git.diff", {}, repo)
    assert not marker.exists()


def test_git_tools_are_read_only_and_tiered() -> None:
    class Bare:
        config = None

    specs = {s.name: s for s in git_tool_specs(Bare())}
    assert set(specs) == {f"os.git.{n}" for n in ("status", "log", "diff", "show", "blame", "branch")}
    assert all(s.resource_class.value == "pure_read" and s.approval_category is None for s in specs.values())
    assert {n for n, s in specs.items() if s.tier.value == "frequent"} == {"os.git.status", "os.git.log", "os.git.diff"}
