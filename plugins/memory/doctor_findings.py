"""`atomic-agent doctor`: is memory.sqlite usable, is its link graph sound, and do the
memory phases' switches fit together? Read-only: nothing here writes or migrates."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

CHECK = "memory"


def _switch(raw: dict[str, Any], block: str, key: str, default: bool) -> bool:
    value = raw.get(block, {}).get(key, default) if isinstance(raw.get(block), dict) else default
    return bool(value)


def config_findings(state_dir: Path) -> list[Any]:
    from atomic_agent.api import DoctorFinding, read_raw_config

    try:
        raw = read_raw_config(state_dir / "config.json")
    except Exception:
        return []  # the core's own check reports a broken config
    out = []
    if _switch(raw, "memoryEvolution", "enabled", True) and not _switch(raw, "memoryLinks", "enabled", True):
        out.append(DoctorFinding(f"{CHECK}.phases", "warn",
                                 "memoryEvolution is on but memoryLinks is off: EVOLVE lines ride the link "
                                 "generator's call, so no tag is ever evolved",
                                 "turn memoryLinks.enabled on, or memoryEvolution.enabled off"))
    llama = raw.get("llama", {}) if isinstance(raw.get("llama"), dict) else {}
    if int(llama.get("parallel", 2)) < 2 and not llama.get("reflectionSlot", True):
        out.append(DoctorFinding(f"{CHECK}.slots", "warn",
                                 "the managed llama-server runs one slot (llama.parallel=1, reflectionSlot=false): "
                                 "reflection and the link generator share it with the session and evict its cache "
                                 "(counted in agent.memory.background_slot.fallback)",
                                 "set llama.reflectionSlot true (or llama.parallel 2) and restart the server"))
    return out


def database_findings(state_dir: Path) -> list[Any]:
    from atomic_agent.api import DoctorFinding, open_sqlite_read_only, sqlite_migrations

    from .memory_database import memory_db_path
    from .memory_schema import MIGRATIONS

    path = memory_db_path(state_dir)
    if not path.exists():
        return [DoctorFinding(CHECK, "ok", "no memory.sqlite yet (created with the first note or fact)", "")]
    try:
        conn = open_sqlite_read_only(path)
        try:
            integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
            schema = sqlite_migrations.read_schema_state(conn)
            newer = schema.newer_than(MIGRATIONS)
            notes = conn.execute("SELECT count(*) FROM memories").fetchone()[0] \
                if "m002_memories" in schema.applied else 0
            links = bad = 0
            if "m004_memory_links" in schema.applied:
                links = conn.execute("SELECT count(*) FROM memory_links").fetchone()[0]
                bad = conn.execute(
                    "SELECT count(*) FROM memory_links l WHERE l.from_id = l.to_id OR NOT EXISTS "
                    "(SELECT 1 FROM memories m WHERE m.id = l.from_id) OR NOT EXISTS "
                    "(SELECT 1 FROM memories m WHERE m.id = l.to_id)").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        return [DoctorFinding(CHECK, "error", f"{path} is not a usable memory database: {exc}. The memory phases "
                              "run without it (no recall, no reflection writes) and leave it untouched",
                              "move it aside to start with an empty memory, or restore a backup")]
    if integrity != "ok":
        return [DoctorFinding(CHECK, "error", f"{path} failed its integrity check: {integrity}",
                              "restore a backup, or move it aside to start with an empty memory")]
    if newer is not None:
        return [DoctorFinding(CHECK, "error", f"{path} was written by a newer atomic-agent ({newer})",
                              "upgrade atomic-agent")]
    if bad:
        return [DoctorFinding(f"{CHECK}.links", "warn", f"{bad} of {links} links are self-loops or point at deleted "
                              "notes (the file was edited without foreign keys); recall skips them",
                              "`atomic-agent memory links` lists them; forget and re-link the notes")]
    return [DoctorFinding(CHECK, "ok", f"{notes} notes, {links} links", "")]


def memory_findings(state_dir: Path) -> list[Any]:
    return [*database_findings(state_dir), *config_findings(state_dir)]
