"""`atomic-agent doctor` through the real console script: it reports a broken config and a
damaged database with what to do, never writes while checking, and moves a damaged file
aside only when asked (renamed, never deleted)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

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


def _newer_by_version(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA user_version = 99")


def _newer_by_unknown_step(conn: sqlite3.Connection) -> None:  # same version number, a step this build lacks
    conn.execute("INSERT INTO _migrations (name, applied_at) VALUES ('m099_from_the_future', '2030-01-01')")


def _newer_with_its_writer(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA user_version = 42")
    conn.execute("UPDATE _schema_writer SET build = '9.9.9', version = 42")


NEWER_SPELLINGS = {"version": _newer_by_version, "unknown-step": _newer_by_unknown_step,
                   "writer-named": _newer_with_its_writer}


def _sessions_file(state: Path) -> Path:
    from atomic_agent.sessions.session_store import SessionStore

    SessionStore(state).close()
    return state / "sessions.sqlite"


def _telegram_file(state: Path) -> Path:
    from atomic_agent.plugins.telegram.delivery_database import db_path
    from atomic_agent.plugins.telegram.delivery_store import DeliveryStore

    DeliveryStore.of_state_dir(state, lambda: 0).close()
    return db_path(state)


NEWER_FILES = {"sessions.sqlite": _sessions_file, "telegram.sqlite": _telegram_file}


@pytest.mark.parametrize("spelling", sorted(NEWER_SPELLINGS))
@pytest.mark.parametrize("name", sorted(NEWER_FILES))
def test_a_state_file_from_a_newer_build_is_an_error_with_what_to_do(tmp_path: Path, name: str, spelling: str):
    path = NEWER_FILES[name](tmp_path)
    with sqlite3.connect(path) as conn:
        NEWER_SPELLINGS[spelling](conn)
    conn.close()
    before = path.read_bytes()
    result = _doctor(tmp_path, "--json")
    assert result.returncode == 1, result.stdout
    lines = [f for f in json.loads(result.stdout) if f["check"] == name]
    assert len(lines) == 1, lines  # one verdict per file: not "quick_check ok" beside the refusal
    (finding,) = lines
    assert finding["level"] == "error" and "newer atomic-agent" in finding["detail"]
    assert "upgrade atomic-agent" in finding["advice"] and "Do not move it aside" in finding["advice"]
    if spelling == "writer-named":
        assert "9.9.9 or later" in finding["advice"]
    assert path.read_bytes() == before  # checking wrote nothing


@pytest.mark.parametrize("name", sorted(NEWER_FILES))
def test_a_state_file_this_build_knows_is_not_flagged_newer(tmp_path: Path, name: str):
    NEWER_FILES[name](tmp_path)
    result = _doctor(tmp_path, "--json")
    (finding,) = [f for f in json.loads(result.stdout) if f["check"] == name]
    assert finding["level"] == "ok", finding


RETIRED = {"memory_evolver": ("memory_links", "memoryEvolution.enabled"),
           "memory_typed_notes": ("memory_reflection", "memoryTypedNotes.enabled"),
           "memory_segmentation": ("memory_reflection", "memorySegmentation.enabled"),
           "http": ("serve", "'serve'")}


def test_retired_plugin_names_in_plugins_disabled_are_warned_with_what_to_write(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"version": 3, "plugins": {
        "disabled": [*RETIRED, "telegram", "no_such_plugin"]}}))
    result = _doctor(tmp_path, "--json")
    assert result.returncode == 0, result.stdout + result.stderr  # a warning, not an error
    found = [f for f in json.loads(result.stdout) if f["check"] == "plugins.disabled"]
    assert len(found) == len(RETIRED) and all(f["level"] == "warn" for f in found)
    for name, (became, write) in RETIRED.items():
        (finding,) = [f for f in found if f["detail"].startswith(f"{name!r}")]
        assert became in finding["detail"] and write in finding["advice"], finding
    folded = [f for f in found if "folded" in f["detail"]]
    assert len(folded) == 3 and all("disables nothing" in f["detail"] for f in folded)


def test_current_plugin_names_in_plugins_disabled_raise_no_warning(tmp_path: Path):
    (tmp_path / "config.json").write_text(json.dumps({"version": 3, "plugins": {"disabled": ["serve", "telegram",
                                                                                            "memory_links"]}}))
    result = _doctor(tmp_path, "--json")
    assert not [f for f in json.loads(result.stdout) if f["check"] == "plugins.disabled"]


def test_a_prompt_override_that_overrides_nothing_is_warned_with_what_to_rename(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "stable_prefix.j2").write_text("old name\n")  # renamed _coached
    (tmp_path / "templates" / "stable_prefix_full.j2").write_text("in use\n")
    (tmp_path / "templates" / "no_such_thing.j2").write_text("typo\n")
    (tmp_path / "grammars").mkdir()
    (tmp_path / "grammars" / "tool-call.gbnf").write_text("root ::= \"x\"\n")
    result = _doctor(tmp_path, "--json")
    assert result.returncode == 0, result.stdout + result.stderr  # a warning, not an error
    found = {Path(f["path"]).name: f for f in json.loads(result.stdout) if f["check"] == "prompt.overrides"}
    assert sorted(found) == ["no_such_thing.j2", "stable_prefix.j2"]
    assert "rename it to stable_prefix_coached.j2" in found["stable_prefix.j2"]["advice"]
    assert "rename it to the file it should replace, or remove it" in found["no_such_thing.j2"]["advice"]
