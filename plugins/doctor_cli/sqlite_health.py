"""Read-only health of one SQLite state file, for `atomic-agent doctor`.

Nothing here writes to the file or creates it: a damaged database is reported with what to
do, and moving it aside (`move_aside`) renames it — together with its -wal and -shm — so
the evidence is kept and the next start creates a fresh one.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import attrs

from atomic_agent.api import is_lock_error, open_sqlite_read_only

OK, MISSING, CORRUPT, LOCKED = "ok", "missing", "corrupt", "locked"
COMPANIONS = ("-wal", "-shm")


@attrs.frozen
class FileHealth:
    path: Path
    state: str  # ok | missing | corrupt | locked
    detail: str = ""
    rows: dict[str, int] = attrs.field(factory=dict)  # table -> row count (ok files only)


def check_sqlite_file(path: Path) -> FileHealth:
    """Open `path` read-only and run SQLite's quick_check; count the rows of each table."""
    if not path.exists():
        return FileHealth(path, MISSING, "not created yet (it is made on first use)")
    try:
        conn = open_sqlite_read_only(path)
    except sqlite3.Error as exc:
        return FileHealth(path, CORRUPT, f"cannot be opened: {exc}")
    try:
        problems = [row[0] for row in conn.execute("PRAGMA quick_check(20)").fetchall()]
        if problems != ["ok"]:
            return FileHealth(path, CORRUPT, "; ".join(str(p) for p in problems[:5]))
        tables = [row[0] for row in conn.execute(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name")]
        rows = {name: int(conn.execute(f'select count(*) from "{name}"').fetchone()[0]) for name in tables}
        return FileHealth(path, OK, "quick_check ok", rows)
    except sqlite3.Error as exc:
        if is_lock_error(exc):
            return FileHealth(path, LOCKED, f"locked by another process ({exc}); try again when it is idle")
        return FileHealth(path, CORRUPT, str(exc))
    finally:
        conn.close()


def move_aside(path: Path, now: datetime | None = None) -> list[Path]:
    """Rename the file and its -wal/-shm to `<name>.corrupt-<UTC time>`; the new paths.
    Never deletes anything."""
    stamp = (now or datetime.now(timezone.utc)).strftime("%Y%m%dT%H%M%SZ")
    moved = []
    for suffix in ("", *COMPANIONS):
        source = path.with_name(path.name + suffix)
        if source.exists():
            target = path.with_name(f"{path.name}.corrupt-{stamp}{suffix}")
            source.rename(target)
            moved.append(target)
    return moved
