"""`atomic-agent doctor` lines for Telegram. Read-only: nothing is started or written.

On a fleet host (storage.url set) the deliveries and the poller are the fleet's: they are
read on the shared database's read-only connection, which applies no schema (Telegram's
tables may not exist yet: nothing to report then). On one host telegram.sqlite is read
read-only, never created or migrated (delivery_look). The postgresql plugin's checks say
whether the database answers and whose schema steps are pending."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .bot_token import bot_id_of, dotenv_mode_problem, dotenv_path, read_token
from .delivery_database import DB_FILE, TelegramStoreNewerError, db_path
from .delivery_look import DeliveryLook, look_at_fleet, look_at_state_dir
from .delivery_store import UNCERTAIN, TelegramStoreError
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


def newer_store_finding(state_dir: Path) -> DoctorFinding | None:
    """telegram.sqlite written by a newer build: the channel refuses it, so say so with what to do
    (whether or not telegram is enabled now: enabling it would fail on it)."""
    from atomic_agent import __version__
    from atomic_agent.api import DoctorFinding

    from .delivery_database import DeliveryFileLook
    from .delivery_schema import MIGRATIONS

    path = db_path(state_dir)
    if not path.exists():
        return None
    try:
        look = DeliveryFileLook(path)
    except sqlite3.Error:
        return None  # damage is the generic database check's finding
    look.close()
    schema = look.schema
    newer = schema.newer_than(MIGRATIONS)
    if newer is None:
        return None
    upgrade = f"upgrade atomic-agent to {schema.writer} or later" if schema.writer else "upgrade atomic-agent"
    return DoctorFinding(DB_FILE, "error", f"written by a newer atomic-agent ({newer}); this build ({__version__}) "
                         f"knows schema version {len(MIGRATIONS)} and the Telegram channel refuses the file",
                         f"{upgrade}, or use another state directory. Do not move it aside: it is not damaged, and "
                         "its delivery records (what reached the phone) are the newer build's", str(path))


def local_polled(state_dir: Path) -> str:
    holder = holder_pid(state_dir)
    return f"polled by pid {holder}" if holder else "no runtime is polling right now"


def fleet_polled(look: DeliveryLook) -> str:
    """The process that took the bot's lease last, and whether the lease is held now."""
    if not look.ran:
        return "no host of the fleet ran the Telegram channel yet"
    poller = look.poller
    if poller is None:
        return "no host of the fleet has polled this bot yet"
    return (f"polled by pid {poller['pid']} on {poller['host']} (lease held)" if poller["live"] else
            f"last polled by pid {poller['pid']} on {poller['host']} (lease free: no live poller; a host "
            "running the channel takes over)")


def _shared_database(state_dir: Path, plugin_host: Any, config: Any) -> Any:
    """The fleet's database when storage.url names one (nothing is opened yet), else None."""
    if plugin_host is None or config is None:
        return None
    from atomic_agent.plugins.postgresql.postgresql_contract import SHARED_DATABASE_SERVICE

    return plugin_host.command_service(state_dir, config, SHARED_DATABASE_SERVICE)


def telegram_findings(state_dir: Path, plugin_host: Any = None, config: Any = None) -> list[DoctorFinding]:
    from atomic_agent.api import DoctorFinding, SessionStoreError

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
    try:
        shared = _shared_database(state_dir, plugin_host, config)
        token = read_token(state_dir)
        bot_id = bot_id_of(token) if token else 0
        look = look_at_fleet(shared, bot_id) if shared is not None else look_at_state_dir(db_path(state_dir), bot_id)
        where = shared.shown if shared is not None else str(db_path(state_dir))
    except (SessionStoreError, TelegramStoreError) as exc:
        findings.append(DoctorFinding("telegram deliveries", "warn", f"the fleet's records could not be read: {exc}",
                                      "see the storage.postgresql check"))
        return findings
    except (TelegramStoreNewerError, sqlite3.Error):
        # a newer file is newer_store_finding's finding, damage the generic database check's
        findings.append(DoctorFinding("telegram channel", "ok", local_polled(state_dir)))
        return findings
    if look.older is not None:
        findings.append(DoctorFinding("telegram deliveries", "ok", look.older, "", where))
    uncertain = look.counts[UNCERTAIN]
    if uncertain:
        findings.append(DoctorFinding("telegram deliveries", "warn",
                                      f"{uncertain} repl(ies) may or may not have reached the phone (the process "
                                      "stopped mid-send); they are not resent",
                                      "see `atomic-agent telegram status`", where))
    polled = fleet_polled(look) if shared is not None else local_polled(state_dir)
    findings.append(DoctorFinding("telegram channel", "ok", polled))
    return findings
