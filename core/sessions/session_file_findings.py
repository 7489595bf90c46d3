"""`atomic-agent doctor` on sessions.sqlite's schema: a file a newer build wrote is an error
with what to do, found read-only (the store itself refuses such a file when it opens it; the
doctor says so before a command does). Damage, locks and a full disk are the doctor
plugin's generic database checks; this is what only the core knows: the sessions schema."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from atomic_agent.hook_records import DoctorFinding
from atomic_agent.sessions.session_store import SESSIONS_FILE
from atomic_agent.storage.sqlite_file import open_sqlite_read_only
from atomic_agent.storage.sqlite_migrations import read_schema_state


def sessions_file_findings(state_dir: Path) -> list[DoctorFinding]:
    from atomic_agent import __version__
    from atomic_agent.sessions.session_schema import MIGRATIONS

    path = state_dir / SESSIONS_FILE
    if not path.exists():
        return []
    try:
        conn = open_sqlite_read_only(path)
        try:
            schema = read_schema_state(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return []  # unreadable: the generic database check reports it as what it is
    newer = schema.newer_than(MIGRATIONS)
    if newer is None:
        return []
    upgrade = f"upgrade atomic-agent to {schema.writer} or later" if schema.writer else "upgrade atomic-agent"
    return [DoctorFinding(SESSIONS_FILE, "error",
                          f"written by a newer atomic-agent ({newer}); this build ({__version__}) knows schema "
                          f"version {len(MIGRATIONS)} and refuses the file, so every command that needs sessions "
                          "fails",
                          f"{upgrade}, or point --state-dir / $ATOMIC_AGENT_STATE_DIR at another state directory. "
                          "Do not move it aside: it is not damaged, and the newer build's sessions are in it",
                          str(path))]
