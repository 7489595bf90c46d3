"""os.fs.grep: ripgrep when on PATH, the pure-Python search otherwise, the same output."""

from __future__ import annotations

import shutil

import pytest

from atomic_agent.plugins.os.fs.grep_python import search_python
from atomic_agent.plugins.os.fs.grep_query import GrepQuery
from atomic_agent.plugins.os.fs.grep_ripgrep import search_ripgrep
from tests.plugins.os.fs_kit import make_world

HAS_RG = shutil.which("rg") is not None


def _corpus(ws) -> None:
    (ws / "a").mkdir()
    (ws / "a" / "one.py").write_text("def main():\n    return 1\n# TODO main\n")
    (ws / "b.py").write_text("import os\ndef helper():\n    pass\n")
    (ws / "c.md").write_text("Main docs\nnothing\n")
    (ws / "bin.dat").write_bytes(b"main\x00\x01\x02")
    (ws / ".secret").write_text("main hidden\n")
    (ws / "node_modules").mkdir()
    (ws / "node_modules" / "x.js").write_text("main()\n")
    (ws / "long.txt").write_text("x" * 1000 + "main" + "\n")


async def test_grep_prints_path_line_text(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_RIPGREP", "0")
    w = make_world(tmp_path, monkeypatch)
    _corpus(w.ws)
    r = await w.call("os.fs.grep", {"pattern": "main"})
    assert r.details["engine"] == "python"
    lines = r.summary.splitlines()
    assert lines[0] == "3 match(es) in 2 file(s) under ."
    assert lines[1:3] == ["a/one.py:1:def main():", "a/one.py:3:# TODO main"]
    assert lines[3].startswith("long.txt:1:xxx") and lines[3].endswith("…") and len(lines[3]) < 320


async def test_grep_options_glob_case_fixed_limit(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_RIPGREP", "0")
    w = make_world(tmp_path, monkeypatch)
    _corpus(w.ws)
    assert [m["path"] for m in (await w.call("os.fs.grep", {"pattern": "main", "glob": "*.md",
                                                             "ignoreCase": True})).details["matches"]] == ["c.md"]
    assert (await w.call("os.fs.grep", {"pattern": "main()", "fixedStrings": True})).details["matches"] == [
        {"path": "a/one.py", "line": 1, "text": "def main():"}]
    limited = await w.call("os.fs.grep", {"pattern": "main", "limit": 1})
    assert limited.details["truncated"] and "stopped at limit" in limited.summary
    assert "main hidden" in (await w.call("os.fs.grep", {"pattern": "hidden", "hidden": True})).summary


async def test_grep_invalid_regex_is_a_clear_error(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    r = await w.call("os.fs.grep", {"pattern": "(unclosed"})
    assert r.status == "error" and "invalid regular expression" in r.summary and "fixedStrings" in r.summary


async def test_grep_a_single_file(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ATOMIC_AGENT_RIPGREP", "0")
    w = make_world(tmp_path, monkeypatch)
    _corpus(w.ws)
    r = await w.call("os.fs.grep", {"pattern": "helper", "path": "b.py"})
    assert r.details["matches"] == [{"path": "b.py", "line": 2, "text": "def helper():"}]


@pytest.mark.skipif(not HAS_RG, reason="ripgrep (rg) is not on PATH")
@pytest.mark.parametrize("query", [
    dict(pattern="main"), dict(pattern="MAIN", ignore_case=True), dict(pattern="de[fl]", glob="*.py"),
    dict(pattern="main()", fixed_strings=True), dict(pattern="main", hidden=True), dict(pattern="o", limit=3),
    dict(pattern="nomatchatall")])
async def test_ripgrep_and_python_give_the_same_output(tmp_path, query) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    _corpus(ws)
    q = GrepQuery(root=ws, **query)
    rg = await search_ripgrep(shutil.which("rg"), q)
    py = search_python(q)
    assert rg.matches == py.matches and rg.truncated == py.truncated


@pytest.mark.skipif(not HAS_RG, reason="ripgrep (rg) is not on PATH")
async def test_grep_uses_ripgrep_when_present(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ATOMIC_AGENT_RIPGREP", raising=False)
    w = make_world(tmp_path, monkeypatch)
    _corpus(w.ws)
    r = await w.call("os.fs.grep", {"pattern": "helper"})
    assert r.details["engine"] == "ripgrep" and r.details["matches"][0]["path"] == "b.py"


@pytest.mark.skipif(not HAS_RG, reason="ripgrep (rg) is not on PATH")
async def test_pattern_ripgrep_rejects_falls_back_to_python(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("ATOMIC_AGENT_RIPGREP", raising=False)
    w = make_world(tmp_path, monkeypatch)
    _corpus(w.ws)
    r = await w.call("os.fs.grep", {"pattern": r"def (?=main)"})  # look-ahead: Python re only
    assert r.details["engine"] == "python" and r.details["matches"][0]["line"] == 1
