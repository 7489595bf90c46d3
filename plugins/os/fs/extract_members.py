"""Write an archive's checked members under a destination, all or nothing.

Each file lands at a canonical path that must stay inside the canonical destination (an
existing symlinked directory inside it cannot redirect a member), parent directories are
created one component at a time and must be real directories, files are staged with
O_EXCL | O_NOFOLLOW and published by link (or by rename with `overwrite`), set-id bits are
dropped and the byte budget is enforced while streaming.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
from collections.abc import Sequence
from pathlib import Path

from atomic_agent.plugins.os.fs.archive_guards import ByteBudget, UnsafeArchive
from atomic_agent.plugins.os.fs.archive_reader import ArchiveMember, MemberOpener
from atomic_agent.plugins.os.fs_approval.canonical_target import canonicalize_target, is_within

BLOCK = 1 << 16


def member_target(dest: Path, name: str) -> Path:
    parts = [p for p in name.replace("\\", "/").split("/") if p not in ("", ".")]
    return dest.joinpath(*parts)


def _ensure_dirs(dest: Path, directory: Path, created: list[Path]) -> None:
    current = dest
    for part in directory.relative_to(dest).parts:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current, 0o755)
            created.append(current)
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise UnsafeArchive(f"{current} exists and is not a plain directory; nothing extracted")


def _stage_member(opener: MemberOpener, member: ArchiveMember, target: Path, budget: ByteBudget) -> Path:
    """Stream one member into a hidden temp file next to its target; returns the temp path."""
    tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.extract-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        with os.fdopen(fd, "wb") as out, opener.open(member.name) as stream:
            while block := stream.read(BLOCK):
                budget.spend(len(block))
                out.write(block)
        os.chmod(tmp, (member.mode & 0o777) or 0o644)  # never set-uid / set-gid / sticky
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _publish(tmp: Path, target: Path, overwrite: bool) -> None:
    if overwrite:
        os.replace(tmp, target)  # replaces a planted symlink itself, never follows it
        return
    try:
        os.link(tmp, target)  # fails if anything (even a dangling link) took the name meanwhile
    except FileExistsError:
        raise UnsafeArchive(f"{target} appeared during extraction; nothing more was written") from None
    except OSError:
        if os.path.lexists(target):
            raise UnsafeArchive(f"{target} appeared during extraction") from None
        os.rename(tmp, target)
        return
    _unlink(tmp)


def extract_members(archive: Path, kind: str, members: Sequence[ArchiveMember], dest: Path, overwrite: bool,
                    max_bytes: int) -> list[Path]:
    """Extract into canonical `dest`; returns the files written.

    Phase 1 streams every member into a temp file beside its target; only when all of them
    made it does phase 2 move them into place, so a refused or failing archive leaves the
    destination exactly as it was.
    """
    created_dirs: list[Path] = []
    staged: list[tuple[Path, Path]] = []
    budget = ByteBudget(max_bytes)
    stack = contextlib.ExitStack()
    try:
        opener = stack.enter_context(MemberOpener(archive, kind))
        if not dest.exists():
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(dest, 0o755)
            created_dirs.append(dest)
        for member in members:
            target = member_target(dest, member.name)
            canonical = canonicalize_target(target)
            if canonical is None or not is_within(canonical, dest):
                raise UnsafeArchive(f"{member.name!r} would land outside {dest}; nothing extracted")
            if member.kind == "dir":
                _ensure_dirs(dest, target, created_dirs)
                continue
            _ensure_dirs(dest, target.parent, created_dirs)
            if os.path.lexists(target) and not overwrite:
                raise UnsafeArchive(f"{target} already exists; pass overwrite=true to replace it")
            staged.append((_stage_member(opener, member, target, budget), target))
        for tmp, target in staged:
            _publish(tmp, target, overwrite)
    except BaseException:
        for tmp, _target in staged:
            _unlink(tmp)
        for path in reversed(created_dirs):
            shutil.rmtree(path, ignore_errors=True)
        raise
    finally:
        stack.close()
    return [target for _tmp, target in staged]
