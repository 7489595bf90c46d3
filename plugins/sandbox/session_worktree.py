"""A session's git worktree: where its tools write in `sandbox.worktree` mode, and how the
edits come back (`apply`) or go away (`discard`).

The worktree is a detached checkout of the workspace's repository under
`<state>/worktrees/<session>/`, started from HEAD plus the workspace's uncommitted state
(tracked changes and untracked, not ignored files), committed there as a private base
commit. What the session changed is the worktree's difference from that base, new and
deleted files included. `apply` replays that difference onto the workspace with `git apply`
(checked first: a workspace that moved on in the same lines is refused, and nothing is
half-applied) and removes the worktree; `discard` removes it unapplied. The record of each
worktree is `<state>/worktrees/<session>.json`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import attrs

WORKTREES_DIR = "worktrees"
GIT_TIMEOUT_S = 120.0
BASE_MESSAGE = "atomic-agent: the workspace as the session's worktree began"
IDENTITY = ("-c", "user.name=atomic-agent", "-c", "user.email=atomic-agent@localhost", "-c", "commit.gpgsign=false")
_SESSION_ID = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
_GIT_LOCATION = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR")


class WorktreeError(ValueError):
    """A worktree step that cannot be done, in words that say what to do."""


@attrs.frozen
class WorktreeRecord:
    session_id: str
    repo: str  # the workspace repository's top level
    subdir: str  # the workspace inside it ("" at the top)
    worktree: str
    base: str  # the private base commit: the workspace as the worktree began

    @property
    def working_dir(self) -> Path:
        return Path(self.worktree) / self.subdir if self.subdir else Path(self.worktree)

    @property
    def workspace(self) -> Path:
        return Path(self.repo) / self.subdir if self.subdir else Path(self.repo)


def _git(args: list[str], cwd: Path | str, stdin: bytes | None = None, check: bool = True) -> bytes:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_LOCATION}
    env["GIT_TERMINAL_PROMPT"] = "0"
    try:
        done = subprocess.run(["git", *IDENTITY, *args], cwd=str(cwd), input=stdin, capture_output=True, env=env,
                              timeout=GIT_TIMEOUT_S, check=False)
    except FileNotFoundError:
        raise WorktreeError("sandbox.worktree needs git: install it (Debian: `sudo apt-get install git`)") from None
    except subprocess.TimeoutExpired:
        raise WorktreeError(f"git {args[0]} did not finish within {GIT_TIMEOUT_S:g} s in {cwd}") from None
    if check and done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()[:500]
        raise WorktreeError(f"git {' '.join(args[:2])} failed in {cwd}: {message or f'exit {done.returncode}'}")
    return done.stdout


def _checked_id(session_id: str) -> str:
    if not _SESSION_ID.match(session_id):
        raise WorktreeError(f"{session_id!r} is not a session id (letters, digits, '_', '.', '-'); "
                            "`atomic-agent sandbox list` shows the sessions that have a worktree")
    return session_id


def _record_path(state_dir: Path, session_id: str) -> Path:
    return state_dir / WORKTREES_DIR / f"{_checked_id(session_id)}.json"


def load_record(state_dir: Path, session_id: str) -> WorktreeRecord | None:
    try:
        data: dict[str, Any] = json.loads(_record_path(state_dir, session_id).read_text(encoding="utf-8"))
        return WorktreeRecord(**data)
    except FileNotFoundError:
        return None
    except (ValueError, TypeError) as exc:
        raise WorktreeError(f"the worktree record of session {session_id} is unreadable ({exc}); remove "
                            f"{_record_path(state_dir, session_id)} and run `git worktree prune` in the "
                            "workspace") from None


def list_records(state_dir: Path) -> list[WorktreeRecord]:
    folder = state_dir / WORKTREES_DIR
    records = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        record = load_record(state_dir, path.stem)
        if record is not None:
            records.append(record)
    return records


def _copy_untracked(repo: Path, worktree: Path) -> None:
    listed = _git(["ls-files", "--others", "--exclude-standard", "-z"], repo)
    for name in filter(None, listed.decode("utf-8", "surrogateescape").split("\0")):
        source, target = repo / name, worktree / name
        if source.is_symlink() or source.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)


def open_worktree(state_dir: Path, session_id: str, workspace: Path) -> WorktreeRecord:
    """The session's worktree, created from the workspace on first use."""
    existing = load_record(state_dir, session_id)
    if existing is not None and Path(existing.worktree).is_dir():
        return existing
    workspace = Path(os.path.realpath(workspace))
    try:
        top = Path(_git(["rev-parse", "--show-toplevel"], workspace).decode().strip())
    except WorktreeError:
        raise WorktreeError(f"sandbox.worktree needs the workspace {workspace} to be inside a git repository: run "
                            "`git init && git add -A && git commit -m start` there, or switch sandbox.worktree "
                            "off") from None
    if not _git(["rev-parse", "--verify", "--quiet", "HEAD"], top, check=False).strip():
        raise WorktreeError(f"the repository {top} has no commit yet; commit once (`git add -A && git commit -m "
                            "start`) so the session's worktree has something to start from")
    subdir = os.path.relpath(workspace, top)
    target = state_dir / WORKTREES_DIR / _checked_id(session_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # left over from a crash before the record was written
        _git(["worktree", "remove", "--force", str(target)], top, check=False)
        shutil.rmtree(target, ignore_errors=True)
        _git(["worktree", "prune"], top, check=False)
    _git(["worktree", "add", "--detach", str(target), "HEAD"], top)
    dirty = _git(["diff", "--binary", "HEAD"], top)
    if dirty.strip():
        _git(["apply", "--binary", "--whitespace=nowarn", "-"], target, stdin=dirty)
    _copy_untracked(top, target)
    _git(["add", "-A"], target)
    _git(["commit", "--allow-empty", "--no-verify", "-q", "-m", BASE_MESSAGE], target)
    base = _git(["rev-parse", "HEAD"], target).decode().strip()
    record = WorktreeRecord(session_id, str(top), "" if subdir == "." else subdir, str(target), base)
    path = _record_path(state_dir, session_id)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(attrs.asdict(record), indent=2), encoding="utf-8")
    os.replace(tmp, path)
    return record


def worktree_diff(record: WorktreeRecord, stat: bool = False, width: int | None = None) -> str:
    """What the session changed, as a binary-safe unified diff (or `--stat` lines, `width` columns wide)."""
    _git(["add", "-A"], record.worktree)
    flags = ([f"--stat={width}"] if width else ["--stat"]) if stat else ["--binary"]
    return _git(["diff", "--cached", *flags, record.base], record.worktree).decode("utf-8", "replace")


def changed_files(record: WorktreeRecord) -> list[str]:
    _git(["add", "-A"], record.worktree)
    names = _git(["diff", "--cached", "--name-only", "-z", record.base], record.worktree)
    return [n for n in names.decode("utf-8", "surrogateescape").split("\0") if n]


def _remove(state_dir: Path, record: WorktreeRecord) -> None:
    _git(["worktree", "remove", "--force", record.worktree], record.repo, check=False)
    shutil.rmtree(record.worktree, ignore_errors=True)
    _git(["worktree", "prune"], record.repo, check=False)
    _record_path(state_dir, record.session_id).unlink(missing_ok=True)


def _required(state_dir: Path, session_id: str) -> WorktreeRecord:
    record = load_record(state_dir, session_id)
    if record is None:
        raise WorktreeError(f"session {session_id} has no worktree (nothing to apply or discard); "
                            "`atomic-agent sandbox list` shows the sessions that have one")
    if not Path(record.worktree).is_dir():
        _record_path(state_dir, session_id).unlink(missing_ok=True)
        raise WorktreeError(f"the worktree of session {session_id} ({record.worktree}) is gone; its record was "
                            "removed")
    return record


def apply_worktree(state_dir: Path, session_id: str) -> list[str]:
    """Bring the session's edits into the workspace and remove the worktree; the changed paths."""
    record = _required(state_dir, session_id)
    files = changed_files(record)
    if files:
        # the raw bytes: a text round trip would damage binary hunks
        patch = _git(["diff", "--cached", "--binary", record.base], record.worktree)
        checked = subprocess.run(["git", "apply", "--check", "--binary", "-"], cwd=record.repo, input=patch,
                                 capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
        if checked.returncode != 0:
            reason = checked.stderr.decode("utf-8", "replace").strip()[:500]
            raise WorktreeError(f"the session's edits do not apply to {record.repo} any more (the workspace "
                                f"changed in the same places since): {reason}. Nothing was changed; look at "
                                f"`atomic-agent sandbox diff {session_id}`, then apply by hand or discard")
        _git(["apply", "--binary", "--whitespace=nowarn", "-"], record.repo, stdin=patch)
    _remove(state_dir, record)
    return files


def discard_worktree(state_dir: Path, session_id: str) -> list[str]:
    """Remove the session's worktree unapplied; the paths it had changed."""
    record = _required(state_dir, session_id)
    files = changed_files(record)
    _remove(state_dir, record)
    return files


def worktree_tree(record: WorktreeRecord) -> str:
    """The id of the worktree's current content (a git tree): equal ids, equal files."""
    _git(["add", "-A"], record.worktree)
    return _git(["write-tree"], record.worktree).decode().strip()
