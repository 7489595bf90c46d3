"""What `atomic-agent doctor` says about the PostgreSQL storage: whether storage.url is set
and well formed, whether the database answers with the password from `.env`, and whether its
schema is this build's (pending steps are applied by the next runtime start; steps from a
newer build mean this host must be upgraded), every plugin's schema steps likewise (per
namespace, "storage.schema"), whether a dead process still holds work (lease_health), and
whether a host with another config uses the same database (fleet_config). Read-only: it never
migrates and takes no lease. The password never appears in a finding."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .postgresql_contract import FleetLeaseHolders

CHECK = "storage.postgresql"
SCHEMA = "storage.schema"  # the plugins' schema steps in the fleet's database


def storage_environ(state_dir: Path) -> dict[str, str]:
    """The state dir's `.env` under the process environment (exported values win, as at boot)."""
    from atomic_agent.api import dotenv_file

    try:
        values, _problems = dotenv_file.parse_dotenv((state_dir / ".env").read_text(encoding="utf-8"))
    except OSError:
        values = {}
    return {**values, **os.environ}


def configured_url(state_dir: Path, environ: Mapping[str, str]) -> str:
    from atomic_agent.api import ConfigError, read_raw_config

    if environ.get("ATOMIC_AGENT_STORAGE_URL"):
        return environ["ATOMIC_AGENT_STORAGE_URL"].strip()
    try:
        raw = read_raw_config(state_dir / "config.json")
    except ConfigError:
        return ""  # the core's own config check reports it
    block = raw.get("storage") if isinstance(raw.get("storage"), dict) else {}
    url = block.get("url", "") if isinstance(block, dict) else ""
    return url.strip() if isinstance(url, str) else ""


def storage_findings(state_dir: Path, plugin_host: Any = None, config: Any = None) -> list[Any]:
    """The storage lines; with the plugin host and a loaded config, also each plugin's schema
    steps and leases (their `shared_state` declarations)."""
    from atomic_agent.api import DoctorFinding

    from .database_url import StorageUrlError, parse_database_url

    environ = storage_environ(state_dir)
    raw_url = configured_url(state_dir, environ)
    if not raw_url:
        return []  # the embedded SQLite state: the core's checks cover it
    try:
        url = parse_database_url(raw_url, environ)
    except StorageUrlError as exc:
        return [DoctorFinding(CHECK, "error", str(exc), "fix storage.url in config.json (or unset it for SQLite)")]
    findings = [_database_finding(url)]
    if findings[0].level != "error":
        findings.extend(_plugin_state_findings(url, state_dir, plugin_host, config))
    if findings[0].level == "ok":
        findings.extend(_fleet_findings(url, state_dir))
    if password_in_config(state_dir):
        findings.append(DoctorFinding(
            "storage.url secret", "warn", "storage.url in config.json carries the database password",
            f"remove it from the URL (`atomic-agent config set storage.url {url.shown}`) and put it in <state>/.env "
            "as ATOMIC_AGENT_STORAGE_PASSWORD: config.json is not the place for secrets"))
    return findings


def password_in_config(state_dir: Path) -> bool:
    from urllib.parse import urlsplit

    url = configured_url(state_dir, {})
    try:
        return bool(url) and urlsplit(url).password is not None
    except ValueError:
        return False


def _database_finding(url: Any) -> Any:
    import psycopg

    from atomic_agent.api import DoctorFinding

    from .pg_backend import connect
    from .pg_schema import STEPS, read_schema_status, refusal

    try:
        with connect(url, 5) as conn:
            server = conn.execute("show server_version").fetchone()[0]
            status = read_schema_status(conn)
    except psycopg.Error as exc:
        return DoctorFinding(CHECK, "error", f"{url.shown} cannot be reached: {url.scrub(str(exc).strip())}",
                             "start the server or fix storage.url; put the password in <state>/.env as "
                             "ATOMIC_AGENT_STORAGE_PASSWORD. Until then nothing is admitted")
    refused = refusal(status, url.shown)
    if refused is not None:
        return DoctorFinding(CHECK, "error", str(refused), "upgrade atomic-agent on this host")
    pending = status.pending()
    if pending:
        return DoctorFinding(CHECK, "warn", f"{url.shown} (PostgreSQL {server}) answers; schema steps "
                             f"{', '.join(pending)} are not applied yet",
                             "the next runtime start applies them (under an advisory lock)")
    return DoctorFinding(CHECK, "ok", f"{url.shown} (PostgreSQL {server}) answers; schema is this build's "
                         f"({len(STEPS)} steps)")


def _fleet_findings(url: Any, state_dir: Path) -> list[Any]:
    """A warning when hosts with another config used this database lately (fleet_config)."""
    import psycopg

    from atomic_agent.api import DoctorFinding

    from .fleet_config import config_fingerprint, disagreement, member_of, others_differing
    from .pg_backend import connect

    fingerprint = config_fingerprint(state_dir)
    try:
        with connect(url, 5) as conn:
            others = others_differing(conn, member_of(state_dir), fingerprint)
    except psycopg.Error as exc:
        return [DoctorFinding("storage.fleet", "warn", f"the fleet's hosts could not be read: "
                              f"{url.scrub(str(exc).strip())}", "run `atomic-agent doctor` again")]
    if others:
        return [DoctorFinding("storage.fleet", "warn", disagreement(url.shown, fingerprint, others),
                              "one database per fleet; one config.json for every host of a fleet")]
    return [DoctorFinding("storage.fleet", "ok", f"no host with another config used {url.shown} lately "
                          f"(this config: {fingerprint})")]


def _plugin_state_findings(url: Any, state_dir: Path, plugin_host: Any, config: Any) -> list[Any]:
    """Each plugin's schema steps (pending, or from a newer build) and the leases' health."""
    import psycopg

    from atomic_agent.api import DoctorFinding

    from .doctor_services import shared_states
    from .lease_health import CHECK as LEASES
    from .lease_health import lease_finding, read_holders
    from .pg_backend import connect
    from .pg_schema import read_schema_status

    states = shared_states(state_dir, plugin_host, config)
    steps: dict[str, list[str]] = {}  # each plugin's (owner's) steps this build knows
    for state in states:
        if state.owner:
            steps.setdefault(state.owner, []).extend(name for name, _ in state.schema_steps)
    interval = float(config.block("storage").takeover_interval_s) if config is not None else 2.0
    try:
        with connect(url, 5) as conn:
            status = read_schema_status(conn)
            findings = [_plugin_schema_finding(status, steps)] if steps else []
            if status.pending() or status.unknown():
                return findings  # the core's tables are not (or not this build's): nothing to read
            ready = {owner for owner, names in steps.items()
                     if not status.unknown(_as_steps(names), owner) and all(n in status.applied for n in names)}
            holders = [lease for state in states if state.owner in ready
                       and isinstance(state, FleetLeaseHolders) for lease in state.leases]
            findings.append(lease_finding(read_holders(conn, holders), interval))
    except psycopg.Error as exc:
        return [DoctorFinding(LEASES, "warn", f"the fleet's leases could not be read: {url.scrub(str(exc).strip())}",
                              "run `atomic-agent doctor` again")]
    return findings


def _as_steps(names: list[str]) -> list[Any]:
    from .pg_schema import Step

    return [Step(name, ()) for name in names]


def _plugin_schema_finding(status: Any, steps: dict[str, list[str]]) -> Any:
    """"storage.schema": the plugins' steps, per namespace, against what the database recorded."""
    from atomic_agent.api import DoctorFinding

    newer = {owner: status.unknown(_as_steps(names), owner) for owner, names in sorted(steps.items())}
    newer = {owner: names for owner, names in newer.items() if names}
    if newer:
        return DoctorFinding(SCHEMA, "error", "steps from a newer atomic-agent ("
                             f"{status.writer or 'unknown build'}): " + "; ".join(
                                 f"the {owner} plugin's {', '.join(names)}" for owner, names in newer.items())
                             + ". Those plugins refuse their tables on this host",
                             "upgrade atomic-agent on this host to that build or later (every host of the fleet "
                             "must run it)")
    pending = {owner: [n for n in names if n not in status.applied] for owner, names in sorted(steps.items())}
    pending = {owner: names for owner, names in pending.items() if names}
    if pending:
        return DoctorFinding(SCHEMA, "warn", "plugin schema steps not applied yet: " + "; ".join(
            f"{owner}: {', '.join(names)}" for owner, names in pending.items()),
            "each plugin applies its own steps when it first uses the database (a runtime start, or one of its "
            "commands), under the migration advisory lock")
    return DoctorFinding(SCHEMA, "ok", "every plugin's schema is this build's: " + ", ".join(
        f"{owner} {len(names)} step(s)" for owner, names in sorted(steps.items())), "")
