"""`atomic-agent doctor` lines for Telegram. Read-only: nothing is started or written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .bot_token import dotenv_mode_problem, dotenv_path, read_token
from .delivery_store import DB_FILE, UNCERTAIN, db_path
from .instance_lock import holder_pid
from .telegram_config import TELEGRAM_BLOCK

if TYPE_CHECKING:
    from atomic_agent.api import DoctorFinding


def _block(state_dir: Path) -> dict[str, Any] | None:
    from atomic_agent.api import ConfigError, read_raw_config

    try:
        raw = read_raw_config(state_dir / "config.json")
    except ConfigError:
        return None  # the core's config check reports it
    block = raw.get(TELEGRAM_BLOCK)
    return block if isinstance(block, dict) else {}


def uncertain_count(state_dir: Path) -> int:
    from atomic_agent.api import open_sqlite_read_only

    path = db_path(state_dir)
    if not path.exists():
        return 0
    conn = open_sqlite_read_only(path)
    try:
        return int(conn.execute("SELECT COUNT(*) FROM deliveries WHERE state = ?", (UNCERTAIN,)).fetchone()[0])
    except Exception:
        return 0
    finally:
        conn.close()


def newer_store_finding(state_dir: Path) -> DoctorFinding | None:
    """telegram.sqlite written by a newer build: the channel refuses it, so say so with what to do
    (whether or not telegram is enabled now: enabling it would fail on it)."""
    import sqlite3

    from atomic_agent import __version__
    from atomic_agent.api import DoctorFinding, open_sqlite_read_only, sqlite_migrations

    from .delivery_schema import MIGRATIONS

    path = db_path(state_dir)
    if not path.exists():
        return None
    try:
        conn = open_sqlite_read_only(path)
        try:
            schema = sqlite_migrations.read_schema_state(conn)
        finally:
            conn.close()
    except sqlite3.Error:
        return None  # damage is the generic database check's finding
    newer = schema.newer_than(MIGRATIONS)
    if newer is None:
        return None
    upgrade = f"upgrade atomic-agent to {schema.writer} or later" if schema.writer else "upgrade atomic-agent"
    return DoctorFinding(DB_FILE, "error", f"written by a newer atomic-agent ({newer}); this build ({__version__}) "
                         f"knows schema version {len(MIGRATIONS)} and the Telegram channel refuses the file",
                         f"{upgrade}, or use another state directory. Do not move it aside: it is not damaged, and "
                         "its delivery records (what reached the phone) are the newer build's", str(path))


def telegram_findings(state_dir: Path) -> list[DoctorFinding]:
    from atomic_agent.api import DoctorFinding

    newer = newer_store_finding(state_dir)
    block = _block(state_dir)
    if block is None or not block.get("enabled"):
        return [newer] if newer is not None else []
    findings = [newer] if newer is not None else []
    if read_token(state_dir) is None:
        findings.append(DoctorFinding("telegram token", "error", "telegram.enabled is true but no TELEGRAM_BOT_TOKEN "
                                      "is stored", "run `atomic-agent telegram token`", str(dotenv_path(state_dir))))
    mode = dotenv_mode_problem(state_dir)
    if mode is not None:
        findings.append(DoctorFinding("telegram token file", "error", mode, f"chmod 600 {dotenv_path(state_dir)}",
                                      str(dotenv_path(state_dir))))
    if block.get("ownerUserId") is None:
        findings.append(DoctorFinding("telegram owner", "warn", "no owner: the bot ignores every message",
                                      "run `atomic-agent telegram pair`, then send the bot a DM within 60 s"))
    uncertain = uncertain_count(state_dir)
    if uncertain:
        findings.append(DoctorFinding("telegram deliveries", "warn",
                                      f"{uncertain} repl(ies) may or may not have reached the phone (the process "
                                      "stopped mid-send); they are not resent",
                                      "see `atomic-agent telegram status`", str(db_path(state_dir))))
    holder = holder_pid(state_dir)
    findings.append(DoctorFinding("telegram channel", "ok",
                                  f"polled by pid {holder}" if holder else "no runtime is polling right now"))
    return findings
