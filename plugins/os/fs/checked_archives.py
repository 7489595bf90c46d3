"""The `archives` service (plugins/os/archives_contract.py): the guards os.fs.archive.extract
uses, for a plugin that unpacks an archive it was handed (a skill to install)."""

from __future__ import annotations

from pathlib import Path


class GuardedArchives:
    def extract(self, archive: Path, dest: Path, max_bytes: int) -> list[Path]:
        from .archive_guards import UnsafeArchive, check_members
        from .archive_reader import archive_kind, list_members
        from .extract_members import extract_members

        if dest.exists():
            raise UnsafeArchive(f"{dest} already exists; unpack into a new directory")
        kind = archive_kind(archive)
        members = list_members(archive, kind)
        check_members(members, max_bytes)
        names = [m.name.rstrip("/") for m in members]
        if len(set(names)) != len(names):
            raise UnsafeArchive("refused, nothing extracted: the archive lists the same entry twice")
        return extract_members(archive, kind, members, dest, False, max_bytes)
