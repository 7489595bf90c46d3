"""`atomic-agent doctor` through the real console script says whether the configured sandbox
can run (and how to fix it when it cannot), and names sessions whose worktree edits wait."""

from __future__ import annotations

import json
from pathlib import Path

from atomic_agent.config.migrate_config import CONFIG_VERSION
from tests.cli.run_cli import run_cli


def doctor(state: Path, sandbox: dict) -> dict[str, dict]:
    (state / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, "sandbox": sandbox}))
    result = run_cli(["--state-dir", str(state), "doctor", "--json"], env={"ATOMIC_AGENT_STATE_DIR": ""})
    return {f["check"]: f for f in json.loads(result.stdout)}


def test_doctor_reports_a_working_sandbox_as_ok(tmp_path: Path) -> None:
    assert doctor(tmp_path, {"mode": "auto"})["sandbox"]["level"] == "ok"


def test_doctor_reports_always_mode_with_a_missing_bwrap_as_an_error_with_the_fix(tmp_path: Path) -> None:
    finding = doctor(tmp_path, {"mode": "always", "bwrapPath": str(tmp_path / "nope" / "bwrap")})["sandbox"]
    assert finding["level"] == "error" and "every os.shell.run call fails" in finding["detail"]
    assert "apt-get install bubblewrap" in finding["advice"]


def test_doctor_is_silent_about_the_sandbox_when_it_is_off(tmp_path: Path) -> None:
    assert "sandbox" not in doctor(tmp_path, {"mode": "off"})
