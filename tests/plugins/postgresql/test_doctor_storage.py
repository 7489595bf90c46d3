"""`atomic-agent doctor` through the real console script checks storage.url: the database
answers with the password from `<state>/.env`, and its schema is this build's (pending steps
a warning, a newer build's steps an error). It never migrates, and never prints the password."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from atomic_agent.config.migrate_config import CONFIG_VERSION
from atomic_agent.plugins.postgresql.pg_schema import MIGRATIONS_TABLE
from atomic_agent.plugins.postgresql.testing.pg_server import free_port
from tests.cli.run_cli import run_cli
from tests.plugins.postgresql.pg_kit import backend_on, raw, tables


def _doctor(state: Path, url: str, password: str, check: str = "storage.postgresql") -> dict[str, Any]:
    state.mkdir(parents=True, exist_ok=True)
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "storage": {"url": url}}))
    (state / ".env").write_text(f"ATOMIC_AGENT_STORAGE_PASSWORD={password}\n")
    result = run_cli(["--state-dir", str(state), "doctor", "--json"], env={"ATOMIC_AGENT_STATE_DIR": ""})
    assert password not in result.stdout + result.stderr
    findings = {f["check"]: f for f in json.loads(result.stdout)}
    return findings[check]  # type: ignore[no-any-return]


def test_doctor_reports_a_fresh_database_as_pending_without_migrating_it(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    finding = _doctor(tmp_path / "state", server.url(name), server.password)
    assert finding["level"] == "warn" and "m001_sessions" in finding["detail"] and "next runtime start" in finding[
        "advice"]
    assert MIGRATIONS_TABLE not in tables(postgresql_database)  # read-only


def test_doctor_passes_a_migrated_database(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    backend = backend_on(postgresql_database)
    backend.open_store().close()
    backend.close()
    finding = _doctor(tmp_path / "state", server.url(name), server.password)
    assert finding["level"] == "ok" and "PostgreSQL 15" in finding["detail"] and "schema is this build's" in finding[
        "detail"]


def test_doctor_says_an_unreachable_database_is_an_error_with_what_to_do(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    finding = _doctor(tmp_path / "state", f"postgresql://agent@127.0.0.1:{free_port()}/{name}", "pw-" + server.password)
    assert finding["level"] == "error" and "cannot be reached" in finding["detail"]
    assert "ATOMIC_AGENT_STORAGE_PASSWORD" in finding["advice"]


def test_doctor_refuses_a_database_from_a_newer_build(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    backend = backend_on(postgresql_database)
    backend.open_store().close()
    backend.close()
    with raw(postgresql_database) as conn:
        conn.execute(f"insert into {MIGRATIONS_TABLE} (name, build) values ('m999_later', '9.9.9')")
    finding = _doctor(tmp_path / "state", server.url(name), server.password)
    assert finding["level"] == "error" and "newer atomic-agent (9.9.9" in finding["detail"]


def test_doctor_warns_when_config_json_holds_the_password(tmp_path: Path, postgresql_database: Any):
    server, name = postgresql_database
    url = server.url(name).replace("agent@", f"agent:{server.password}@")
    finding = _doctor(tmp_path / "state", url, "unused", check="storage.url secret")
    assert finding["level"] == "warn" and "ATOMIC_AGENT_STORAGE_PASSWORD" in finding["advice"]
