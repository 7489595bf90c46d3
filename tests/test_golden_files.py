"""Every golden comparison fails when its golden file is missing (deleting a golden must
never make its test pass), and only the explicit flag writes one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.golden_files import REGENERATE_ENV, assert_matches_golden

TESTS = Path(__file__).resolve().parent


def test_a_missing_golden_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REGENERATE_ENV, raising=False)
    with pytest.raises(pytest.fail.Exception, match=REGENERATE_ENV):
        assert_matches_golden(tmp_path / "gone.txt", "bytes")
    assert not (tmp_path / "gone.txt").exists()


def test_a_different_golden_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REGENERATE_ENV, raising=False)
    (tmp_path / "g.txt").write_text("old")
    with pytest.raises(AssertionError):
        assert_matches_golden(tmp_path / "g.txt", "new")


def test_only_the_flag_writes_a_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REGENERATE_ENV, "1")
    assert_matches_golden(tmp_path / "sub" / "g.txt", "fresh")
    assert (tmp_path / "sub" / "g.txt").read_text() == "fresh"


def test_no_test_writes_a_golden_file_itself() -> None:
    """Golden comparisons go through assert_matches_golden; no test writes under a golden/ dir."""
    offenders = []
    for path in TESTS.rglob("test_*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("write_text", "write_bytes") and "golden" in ast.unparse(node.func.value).lower()):
                offenders.append(f"{path.relative_to(TESTS)}:{node.lineno}")
    assert not offenders, offenders
