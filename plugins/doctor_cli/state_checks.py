"""The checks `atomic-agent doctor` runs over a state directory. Each returns findings; none
writes to a database (the directory probe writes and removes one scratch file)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import DoctorFinding as Finding

from .sqlite_health import FULL, UNWRITABLE, DirectoryProbe, check_sqlite_file, probe_directory

OK, WARN, ERROR = "ok", "warn", "error"
LOW_DISK_BYTES = 200 * 1024 * 1024  # a durable commit that hits a full disk fails (nothing is lost)


def check_state_dir(state_dir: Path) -> list[Finding]:
    if not state_dir.is_dir():
        return [Finding("state dir", ERROR, f"{state_dir} does not exist",
                        "it is created by any other command; check --state-dir / $ATOMIC_AGENT_STATE_DIR", str(state_dir))]
    findings = []
    probe = probe_directory(state_dir)
    if probe.full:
        findings.append(Finding("state dir", ERROR, f"{state_dir}: the disk is full ({probe.detail})",
                                "free some space: every accepted message is written here first, and nothing can "
                                "be until there is room (the databases are not damaged by this)", str(state_dir)))
    elif not probe.writable or not os.access(state_dir, os.W_OK):
        findings.append(Finding("state dir", ERROR, f"{state_dir} is not writable ({probe.detail or 'permissions'})",
                                "make it writable (permissions, or a read-only mount): every accepted message is "
                                "written here first", str(state_dir)))
    else:
        findings.append(Finding("state dir", OK, str(state_dir), path=str(state_dir)))
    free = shutil.disk_usage(state_dir).free
    level = WARN if free < LOW_DISK_BYTES else OK
    advice = "free some space: writes are refused (and reported) when the disk is full" if level == WARN else ""
    findings.append(Finding("disk", level, f"{free / 2**20:,.0f} MiB free", advice, str(state_dir)))
    return findings


def check_config(state_dir: Path, boot_error: Exception | None) -> Finding:
    path = state_dir / "config.json"
    if boot_error is not None:
        return Finding("config", ERROR, str(boot_error),
                       "fix the named field (or move config.json aside to go back to the defaults)", str(path))
    return Finding("config", OK, "loads and validates" if path.exists() else "defaults (no config.json yet)",
                   path=str(path))


def check_databases(state_dir: Path) -> list[Finding]:
    """Every SQLite file of the state dir (sessions, memory, persistence stores, ...)."""
    names = sorted({p.name for p in state_dir.glob("*.sqlite")} | {"sessions.sqlite", "memory.sqlite"})
    findings = []
    probe: DirectoryProbe = probe_directory(state_dir)  # before any verdict: unwritable or full is not damage
    for name in names:
        health = check_sqlite_file(state_dir / name, probe)
        if health.state == "ok":
            rows = sum(health.rows.values())
            findings.append(Finding(name, OK, f"quick_check ok, {len(health.rows)} tables, {rows:,} rows",
                                    path=str(health.path)))
        elif health.state == "missing":
            findings.append(Finding(name, OK, health.detail, path=str(health.path)))
        elif health.state == FULL:
            findings.append(Finding(name, ERROR, health.detail, "free some space on that disk; the database is not "
                                    "damaged — do not move it aside", str(health.path)))
        elif health.state == UNWRITABLE:
            findings.append(Finding(name, ERROR, health.detail, "make the state directory (and this file) writable "
                                    "again; the database is not damaged — do not move it aside", str(health.path)))
        elif health.state == "locked":
            findings.append(Finding(name, WARN, health.detail, "another atomic-agent is writing it; run doctor "
                                    "again when it is idle", str(health.path)))
        else:
            findings.append(Finding(name, ERROR, f"damaged: {health.detail}",
                                    f"`atomic-agent doctor --move-aside {name}` renames it (with its -wal and "
                                    "-shm) to keep the evidence; the next command starts a fresh one. Restore "
                                    "a backup instead if you have one", str(health.path)))
    return findings


def plugin_findings(host: Any, state_dir: Path, config: Any = None) -> list[Finding]:  # the CLI state's
    """What every plugin's `report_doctor_findings` reports (`config` None: config.json did not
    load); a raising plugin is one error finding."""
    from atomic_agent.api import call_each_plugin

    findings: list[Finding] = []
    for answer in call_each_plugin(host, "report_doctor_findings", state_dir=state_dir, plugin_host=host,
                                   config=config):
        if answer.error:
            findings.append(Finding(f"plugin {answer.plugin}", ERROR, f"its doctor check raised {answer.error}",
                                    "report it to the plugin's author; `atomic-agent plugins` lists it",
                                    plugin=answer.plugin))
            continue
        for item in answer.value or ():
            if isinstance(item, Finding):
                findings.append(attrs.evolve(item, plugin=answer.plugin))
            else:
                findings.append(Finding(f"plugin {answer.plugin}", ERROR,
                                        f"its doctor check returned {type(item).__name__}, not a DoctorFinding",
                                        plugin=answer.plugin))
    return findings


LEVEL_RANK = {OK: 0, WARN: 1, ERROR: 2}


def merge_findings(own: list[Finding], from_plugins: list[Finding]) -> list[Finding]:
    """The doctor's own findings with the plugins' added. A plugin that knows a database's
    schema (the core for sessions.sqlite, telegram for its own) may report on a file the
    generic check already called ok: its finding takes that line's place when it is worse,
    so one file never reads both "ok" and "error"."""
    merged = list(own)
    rest = []
    for finding in from_plugins:
        index = next((i for i, f in enumerate(merged) if f.check == finding.check and f.path == finding.path
                      and f.path is not None), None)
        if index is None:
            rest.append(finding)
        elif LEVEL_RANK.get(finding.level, 0) >= LEVEL_RANK.get(merged[index].level, 0):
            merged[index] = finding
    return merged + rest
