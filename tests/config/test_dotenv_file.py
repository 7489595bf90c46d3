"""`<state>/.env`: tiny parser, shell-exported values win, transient-lock retries, 0600 writes."""

from __future__ import annotations

import errno
import stat
from pathlib import Path

from atomic_agent.config import dotenv_file
from atomic_agent.config.dotenv_file import load_dotenv, parse_dotenv, set_dotenv_key


def test_dotenv_parser_handles_quotes_comments_and_blanks():
    values, problems = parse_dotenv('# comment\n\nA=1\nB="two words"\nC=\'x\'\n  D = spaced \nbad line\n')
    assert values == {"A": "1", "B": "two words", "C": "x", "D": "spaced"}
    assert problems == ["line 7: expected KEY=VALUE"]


def test_dotenv_has_no_interpolation_or_export_prefix():
    values, problems = parse_dotenv("A=$HOME\nexport B=1\n")
    assert values == {"A": "$HOME"}
    assert problems == ["line 2: expected KEY=VALUE"]


def test_dotenv_shell_exported_values_win(tmp_path: Path):
    (tmp_path / ".env").write_text("TOKEN=from-file\nEMPTY=filled\nNEW=1\n")
    env = {"TOKEN": "from-shell", "EMPTY": ""}
    result = load_dotenv(tmp_path / ".env", env)
    assert env == {"TOKEN": "from-shell", "EMPTY": "filled", "NEW": "1"}
    assert sorted(result.loaded) == ["EMPTY", "NEW"] and result.skipped == ["TOKEN"]


def test_dotenv_missing_file_is_a_silent_no_op(tmp_path: Path):
    env: dict[str, str] = {}
    result = load_dotenv(tmp_path / ".env", env)
    assert env == {} and result.exists is False and result.error is None


def test_dotenv_load_result_never_carries_values(tmp_path: Path):
    (tmp_path / ".env").write_text("SECRET=hunter2\n")
    result = load_dotenv(tmp_path / ".env", {})
    assert "hunter2" not in repr(result)


def test_dotenv_transient_lock_is_retried(tmp_path: Path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("A=1\n")
    calls = {"n": 0}
    real = Path.read_text

    def flaky(self: Path, *a, **k):
        calls["n"] += 1
        if calls["n"] < 3:
            raise OSError(errno.EBUSY, "busy")
        return real(self, *a, **k)

    monkeypatch.setattr(Path, "read_text", flaky)
    monkeypatch.setattr(dotenv_file.time, "sleep", lambda s: None)
    env: dict[str, str] = {}
    result = load_dotenv(path, env)
    assert env == {"A": "1"} and result.attempts == 3 and result.error is None


def test_dotenv_persistent_failure_reports_code_without_raising(tmp_path: Path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("A=1\n")
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (_ for _ in ()).throw(OSError(errno.EACCES, "denied")))
    monkeypatch.setattr(dotenv_file.time, "sleep", lambda s: None)
    result = load_dotenv(path, {})
    assert result.error is not None and "EACCES" in result.error and result.attempts == 3


def test_dotenv_non_transient_error_fails_fast(tmp_path: Path, monkeypatch):
    path = tmp_path / ".env"
    path.write_text("A=1\n")
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (_ for _ in ()).throw(OSError(errno.EISDIR, "dir")))
    result = load_dotenv(path, {})
    assert result.attempts == 1 and "EISDIR" in (result.error or "")


def test_dotenv_set_key_is_atomic_0600_and_keeps_other_lines(tmp_path: Path):
    path = tmp_path / ".env"
    path.write_text("# keep me\nA=1\nB=2\n")
    set_dotenv_key(path, "A", "new value")
    set_dotenv_key(path, "C", "3")
    assert path.read_text() == '# keep me\nA="new value"\nB=2\nC=3\n'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    values, _ = parse_dotenv(path.read_text())
    assert values["A"] == "new value"
