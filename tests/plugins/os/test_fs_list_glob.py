"""os.fs.list and os.fs.glob: compact, bounded, deterministic, never following directory links."""

from __future__ import annotations

import pytest

from atomic_agent.plugins.os.fs.glob_pattern import GlobPatternError, match_path
from tests.plugins.os.fs_kit import make_world


def _tree(ws) -> None:
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "a.py").write_text("a")
    (ws / "src" / "b.py").write_text("bb")
    (ws / "src" / "c.md").write_text("c")
    (ws / "README.md").write_text("r" * 2048)
    (ws / ".hidden").write_text("h")
    (ws / "node_modules" / "dep").mkdir(parents=True)
    (ws / "node_modules" / "dep" / "x.py").write_text("x")


async def test_list_is_compact_dirs_first_with_sizes(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    _tree(w.ws)
    (w.ws / "ln").symlink_to(w.ws / "README.md")
    r = await w.call("os.fs.list", {})
    assert r.summary.splitlines() == [".: 2 dirs, 2 files shown".replace(".:", "./:"), "node_modules/", "src/",
                                      "ln -> " + str(w.ws / "README.md"), "README.md  2.0K"]


async def test_list_depth_expands_but_not_dependency_dirs(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    _tree(w.ws)
    r = await w.call("os.fs.list", {"depth": 3})
    lines = r.summary.splitlines()
    assert "node_modules/ (not expanded)" in lines and "    a.py  1B" in lines and "  b.py  2B" in lines
    assert ".hidden" not in r.summary
    assert ".hidden" in (await w.call("os.fs.list", {"hidden": True})).summary


async def test_list_stops_at_limit_and_says_so(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    for i in range(30):
        (w.ws / f"f{i:02}").write_text("")
    r = await w.call("os.fs.list", {"limit": 5})
    assert len(r.summary.splitlines()) == 6 and "stopped at limit" in r.summary


async def test_glob_spans_directories_and_skips_hidden_and_dependencies(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    _tree(w.ws)
    r = await w.call("os.fs.glob", {"pattern": "**/*.py"})
    assert r.details["matches"] == ["src/b.py", "src/pkg/a.py"]
    assert (await w.call("os.fs.glob", {"pattern": "*.md"})).details["matches"] == ["README.md"]
    assert (await w.call("os.fs.glob", {"pattern": "src/*.{py,md}"})).details["matches"] == ["src/b.py", "src/c.md"]


async def test_glob_does_not_descend_into_a_link_to_root(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "root").symlink_to("/", target_is_directory=True)
    r = await w.call("os.fs.glob", {"pattern": "**/passwd"})
    assert r.status == "ok" and r.details["matches"] == []


@pytest.mark.parametrize("bad", ["/etc/*", "../*", "a/../../b", "~/x", "{a,b"])
async def test_glob_rejects_escaping_or_broken_patterns(tmp_path, monkeypatch, bad) -> None:
    w = make_world(tmp_path, monkeypatch)
    r = await w.call("os.fs.glob", {"pattern": bad})
    assert r.status == "error"


def test_glob_translation() -> None:
    assert match_path("a/b/c.py", "**/*.py") and match_path("c.py", "**/*.py")
    assert not match_path("a/c.py", "*.py") and match_path("a/c.py", "*.py", basename_if_no_slash=True)
    assert match_path("x1.txt", "x[0-9].txt") and not match_path("xa.txt", "x[!a-z].txt")
    with pytest.raises(GlobPatternError):
        match_path("x", "")
