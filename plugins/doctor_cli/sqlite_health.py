"""Health of one SQLite state file, for `atomic-agent doctor`: damaged, unwritable or full
are three different problems with three different fixes, told apart before any verdict.

Nothing here writes to a database or creates one. A file is read read-only; when even that
fails because the directory cannot take SQLite's shared-memory file (read-only, no space),
it is read once more as an immutable file, so an intact database in a read-only directory
or on a full disk is reported as what it is — intact, and blocked — never as damaged (the
fix for damage, moving the file aside, would throw away a good database). The directory's
writability and free space come from `probe_directory` (a scratch file, written and removed).

Moving a damaged file aside (`move_aside`) renames it together with its -wal and -shm, so
the evidence is kept and the next start creates a fresh one.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
import uuid
from datetime import datetime, timezone
from pathlib import Path

import attrs

from atomic_agent.api import failure_taxonomy, open_sqlite_read_only

OK, MISSING, CORRUPT, LOCKED, UNWRITABLE, FULL = "ok", "missing", "corrupt", "locked", "unwritable", "full"
COMPANIONS = ("-wal", "-shm")
PROBE_BYTES = 64 * 1024  # one scratch write: enough to meet a full disk, small enough to cost nothing
MIN_FREE_BYTES = 1024 * 1024  # below this a durable commit is about to fail: the disk counts as full


@attrs.frozen
class DirectoryProbe:
    writable: bool
    full: bool
    detail: str = ""


@attrs.frozen
class FileHealth:
    path: Path
    state: str  # ok | missing | corrupt | locked | unwritable | full
    detail: str = ""
    rows: dict[str, int] = attrs.field(factory=dict)  # table -> row count (readable files only)


def probe_directory(directory: Path) -> DirectoryProbe:
    """Write and remove a scratch file in `directory`: can a commit land there at all?"""
    free = shutil.disk_usage(directory).free
    scratch = directory / f".doctor-probe-{uuid.uuid4().hex[:8]}"
    try:
        with open(scratch, "wb") as handle:
            handle.write(b"\0" * PROBE_BYTES)
            handle.flush()
            os.fsync(handle.fileno())
    except OSError as exc:
        kind = {errno.ENOSPC: "full", errno.EDQUOT: "full"}.get(exc.errno or 0)
        return DirectoryProbe(writable=False, full=kind == "full", detail=f"{exc.strerror or exc} (errno {exc.errno})")
    finally:
        try:
            scratch.unlink()
        except OSError:
            pass
    if free < MIN_FREE_BYTES:
        return DirectoryProbe(writable=True, full=True, detail=f"only {free:,} bytes free")
    return DirectoryProbe(writable=True, full=False)


def _read(path: Path, immutable: bool) -> tuple[list[str], dict[str, int]]:
    conn = open_sqlite_read_only(path, immutable=immutable)
    try:
        problems = [str(row[0]) for row in conn.execute("PRAGMA quick_check(20)").fetchall()]
        if problems != ["ok"]:
            return problems, {}
        tables = [row[0] for row in conn.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")]
        return [], {name: int(conn.execute(f'select count(*) from "{name}"').fetchone()[0]) for name in tables}
    finally:
        conn.close()


def check_sqlite_file(path: Path, directory: DirectoryProbe | None = None) -> FileHealth:
    """Read `path` (quick_check, row counts) and say whether it is ok, damaged, locked, or
    intact but unwritable / on a full disk. `directory` is the state dir's probe."""
    if not path.exists():
        return FileHealth(path, MISSING, "not created yet (it is made on first use)")
    immutable = False
    try:
        problems, rows = _read(path, immutable=False)
    except sqlite3.Error as exc:
        kind = failure_taxonomy.environment_kind(exc)
        if kind == "locked":
            return FileHealth(path, LOCKED, f"locked by another process ({exc}); try again when it is idle")
        if kind not in ("read_only", "unwritable", "full") and (directory is None or directory.writable):
            return FileHealth(path, CORRUPT, f"cannot be read: {exc}")
        try:  # the directory, not the file, refused: read it as it is on disk
            problems, rows = _read(path, immutable=True)
            immutable = True
        except sqlite3.Error as again:
            return FileHealth(path, CORRUPT, f"cannot be read: {again}")
    if problems:
        return FileHealth(path, CORRUPT, "; ".join(problems[:5]))
    blocked = _blocked(path, directory)
    if blocked is not None:
        return FileHealth(path, blocked[0], blocked[1], rows)
    return FileHealth(path, OK, "quick_check ok" + (" (read as immutable)" if immutable else ""), rows)


def _blocked(path: Path, directory: DirectoryProbe | None) -> tuple[str, str] | None:
    """Why an intact file cannot take a write, or None."""
    if directory is not None and directory.full:
        return FULL, f"intact (quick_check ok), but the disk is full: {directory.detail}"
    if directory is not None and not directory.writable:
        return UNWRITABLE, f"intact (quick_check ok), but its directory cannot be written: {directory.detail}"
    if not os.access(path, os.W_OK):
        return UNWRITABLE, "intact (quick_check ok), but the file is read-only for this user"
    return None


def move_aside(path: Path, now: datetime | None = None) -> list[Path]:
    """Rename the file and its -wal/-shm to `<name>.corrupt-<UTC time>`; the new paths.
    Never deletes anything. An OSError (a read-only directory) leaves what was not renamed."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    moved = []
    for suffix in ("", *COMPANIONS):
        source = path.with_name(path.name + suffix)
        if source.exists():
            target = path.with_name(f"{path.name}.corrupt-{stamp}{suffix}")
            source.rename(target)
            moved.append(target)
    return moved
