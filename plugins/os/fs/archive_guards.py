"""Refuse archive entries that could write outside the destination or never stop growing.

Names: absolute paths, drive letters, `..` components and NUL bytes are refused (zip-slip).
Types: symlink, hard-link, device and other special entries are never extracted (a link
entry followed by a file entry through it is the classic escape). Size: the declared total
must fit the cap, a member that inflates more than MAX_RATIO times is called a bomb, and
the real byte count is enforced while streaming, whatever the headers claim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from atomic_agent.plugins.os.fs.archive_reader import ArchiveMember

DEFAULT_MAX_BYTES = 1 << 30
MAX_RATIO = 200
RATIO_FLOOR_BYTES = 1 << 20  # small members may compress as well as they like
_DRIVE = re.compile(r"\A[A-Za-z]:")


class UnsafeArchive(ValueError):
    pass


def name_problem(name: str) -> str | None:
    if not name or not name.strip("/"):
        return "empty name"
    if "\x00" in name:
        return "NUL byte in the name"
    normal = name.replace("\\", "/")
    if normal.startswith("/") or _DRIVE.match(normal):
        return "absolute path"
    if ".." in normal.split("/"):
        return "`..` component (would escape the destination)"
    if len(normal) > 1024:
        return "name longer than 1024 characters"
    return None


def member_problem(member: ArchiveMember) -> str | None:
    problem = name_problem(member.name)
    if problem:
        return problem
    if member.kind in ("symlink", "hardlink"):
        return f"{member.kind} entry" + (f" -> {member.link}" if member.link else "") + " (links are not extracted)"
    if member.kind in ("device", "other"):
        return f"{member.kind} entry (special files are not extracted)"
    if (member.size is not None and member.compressed and member.size > RATIO_FLOOR_BYTES
            and member.size / member.compressed > MAX_RATIO):
        return (f"inflates {member.size // member.compressed}x ({member.size} bytes from {member.compressed}); "
                "looks like a decompression bomb")
    return None


def check_members(members: Sequence[ArchiveMember], max_bytes: int) -> None:
    problems = [f"{m.name!r}: {p}" for m in members if (p := member_problem(m))]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise UnsafeArchive(f"refused, nothing extracted: {shown}")
    declared = sum(m.size or 0 for m in members)
    if declared > max_bytes:
        raise UnsafeArchive(f"refused, nothing extracted: the entries declare {declared} bytes, over the cap of "
                            f"{max_bytes} (raise maxBytes if you trust this archive)")


class ByteBudget:
    """Counts bytes actually written; raises once the cap is passed (a lying header cannot help)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.used = 0

    def spend(self, n: int) -> None:
        self.used += n
        if self.used > self.cap:
            raise UnsafeArchive(f"stopped: more than {self.cap} bytes decompressed (a decompression bomb, or raise "
                                "maxBytes); everything extracted so far was removed")
