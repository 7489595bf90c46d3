"""`atomic-agent sessions compact ID`: an unknown session is refused before anything runs."""

from __future__ import annotations

from pathlib import Path

from tests.cli.run_cli import run_cli


def test_compact_of_an_unknown_session_fails_with_how_to_find_ids(tmp_path: Path):
    result = run_cli(["--state-dir", str(tmp_path), "sessions", "compact", "nope"])
    assert result.returncode != 0
    assert "no session 'nope'" in result.stderr and "sessions list" in result.stderr
