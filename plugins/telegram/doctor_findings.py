"""`atomic-agent doctor` lines for Telegram. Read-only: nothing is started or written."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .bot_token import dotenv_mode_problem, dotenv_path, read_token
from .delivery_store import UNCERTAIN, db_path
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


def telegram_findings(state_dir: Path) -> list[DoctorFinding]:
    from atomic_agent.api import DoctorFinding

    block = _block(state_dir)
    if block is None or not block.get("enabled"):
        return []
    findings = []
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
