"""`atomic-agent doctor` through the real console script: it reports a broken config and a
damaged database with what to do, never writes while checking, and moves a damaged file
aside only when asked (renamed, never deleted)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.cli.run_cli import run_cli


def _doctor(state: Path, *args: str):
    return run_cli(["--state-dir", str(state), "doctor", *args], env={"ATOMIC_AGENT_STATE_DIR": ""})


def test_a_healthy_state_dir_passes_and_doctor_creates_no_database(tmp_path: Path):
    result = _doctor(tmp_path, "--json")
    assert result.returncode == 0, result.stderr
    findings = {f["check"]: f for f in json.loads(result.stdout)}
    assert findings["config"]["level"] == "ok"
    assert findings["sessions.sqlite"]["detail"].startswith("not created yet")
    assert not (tmp_path / "sessions.sqlite").exists() and not (tmp_path / "memory.sqlite").exists()


def test_doctor_runs_and_names_the_field_when_config_is_broken(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"version": 1, "agent": {"steerMode": "sideways"}}))
    assert run_cli(["--state-dir", str(tmp_path), "sessions", "list"]).returncode == 2  # others refuse
    result = _doctor(tmp_path)
    assert result.returncode == 1
    assert "error  config" in result.stdout and "steerMode" in result.stdout


def test_a_damaged_sessions_file_is_reported_and_kept_byte_for_byte(tmp_path: Path):
    damaged = b"SQLite format 3\0" + b"garbage" * 500
    (tmp_path / "sessions.sqlite").write_bytes(damaged)
    result = _doctor(tmp_path)
    assert result.returncode == 1
    assert "sessions.sqlite" in result.stdout and "damaged" in result.stdout
    assert "--move-aside sessions.sqlite" in result.stdout
    assert (tmp_path / "sessions.sqlite").read_bytes() == damaged  # checking wrote nothing


def test_move_aside_renames_a_damaged_file_and_the_next_command_starts_fresh(tmp_path: Path):
    damaged = b"not a database at all" * 100
    (tmp_path / "sessions.sqlite").write_bytes(damaged)
    moved = _doctor(tmp_path, "--move-aside", "sessions.sqlite")
    assert moved.returncode == 0, moved.stderr
    kept = list(tmp_path.glob("sessions.sqlite.corrupt-*"))
    assert len(kept) == 1 and kept[0].read_bytes() == damaged
    assert run_cli(["--state-dir", str(tmp_path), "sessions", "list"]).returncode == 0
    assert _doctor(tmp_path).returncode == 0


def test_move_aside_refuses_a_healthy_database(tmp_path: Path):
    with sqlite3.connect(tmp_path / "memory.sqlite") as conn:
        conn.execute("create table t (x)")
    result = _doctor(tmp_path, "--move-aside", "memory.sqlite")
    assert result.returncode == 2 and "not damaged" in result.stderr
    assert (tmp_path / "memory.sqlite").exists()


def test_doctor_names_the_installed_llama_server_build_or_how_to_get_one(tmp_path: Path):
    result = run_cli(["--state-dir", str(tmp_path), "doctor", "--json"],
                     env={"ATOMIC_AGENT_STATE_DIR": "", "ATOMIC_AGENT_CACHE_DIR": str(tmp_path / "empty-cache"),
                          "ATOMIC_AGENT_LLAMA_BINARY": ""})
    build = {f["check"]: f for f in json.loads(result.stdout)}["llama-server build"]
    assert build["level"] == "warn" and build["plugin"] == "llama_server"
    assert "no proven build" in build["detail"] and "atomic-agent llama install" in build["advice"]


def test_a_plugin_whose_doctor_check_raises_is_one_error_and_the_rest_still_report(tmp_path: Path):
    from tests.fake_distribution import write_distribution

    site = tmp_path / "site"
    write_distribution(site, "broken-doctor", "1.0", {"broken_doctor": (
        "from atomic_agent.api import hookimpl\n\n"
        "@hookimpl\n"
        "def report_doctor_findings(state_dir):\n"
        "    raise OSError('cannot look')\n")}, {"broken_doctor": "broken_doctor"})
    import os

    result = run_cli(["--state-dir", str(tmp_path / "state"), "doctor", "--json"],
                     env={"ATOMIC_AGENT_STATE_DIR": "", "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
    assert result.returncode == 1
    findings = {f["check"]: f for f in json.loads(result.stdout)}
    broken = findings["plugin broken_doctor"]
    assert broken["level"] == "error" and "OSError: cannot look" in broken["detail"]
    assert findings["config"]["level"] == "ok" and "llama-server build" in findings
