"""os.fs.write / os.fs.edit through the fs funnel: categories, denials, atomic exact-string edits."""

from __future__ import annotations

import os
import stat

import pytest

from atomic_agent.api import ApprovalAnswer
from tests.plugins.os.fs_kit import make_world


async def test_workspace_write_is_silent_at_level_2_and_home_write_asks(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    assert (await w.call("os.fs.write", {"path": "in.txt", "content": "a"})).status == "ok"
    assert w.asker.requests == []
    denied = await w.call("os.fs.write", {"path": "~/out.txt", "content": "b"})
    assert denied.status == "error" and denied.details["denied"] and w.asker.categories == ["fs_write_home"]
    assert not (w.home / "out.txt").exists()
    assert "file write · home" == w.asker.requests[0].label


async def test_write_asks_with_a_summary_naming_the_canonical_target(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, answers=[ApprovalAnswer.once()])
    r = await w.call("os.fs.write", {"path": "sub/new.txt", "content": "hello\n"})
    assert r.status == "ok" and (w.ws / "sub" / "new.txt").read_text() == "hello\n"
    summary = w.asker.requests[0].summary
    assert str(w.ws / "sub" / "new.txt") in summary and "(workspace)" in summary and "6 bytes" in summary


async def test_write_keeps_the_file_mode_and_replaces_atomically(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    script = w.ws / "run.sh"
    script.write_text("old")
    script.chmod(0o750)
    await w.call("os.fs.write", {"path": "run.sh", "content": "new"})
    assert script.read_text() == "new" and stat.S_IMODE(script.stat().st_mode) == 0o750
    assert [p.name for p in w.ws.iterdir()] == ["run.sh"]  # no temp file left behind


async def test_write_without_create_dirs_needs_the_parent(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    r = await w.call("os.fs.write", {"path": "a/b/c.txt", "content": "x", "createDirs": False})
    assert r.status == "error" and "does not exist" in r.summary


async def test_edit_replaces_a_unique_string(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    (w.ws / "app.py").write_text("DEBUG = True\nNAME = 'x'\n")
    r = await w.call("os.fs.edit", {"path": "app.py", "old": "DEBUG = True", "new": "DEBUG = False"})
    assert r.status == "ok" and (w.ws / "app.py").read_text() == "DEBUG = False\nNAME = 'x'\n"


async def test_edit_errors_when_the_old_string_is_missing(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    (w.ws / "a.txt").write_text("abc\n")
    r = await w.call("os.fs.edit", {"path": "a.txt", "old": "xyz", "new": "q"})
    assert r.status == "error" and "not found" in r.summary and (w.ws / "a.txt").read_text() == "abc\n"


async def test_edit_errors_when_the_old_string_is_not_unique(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2)
    (w.ws / "a.txt").write_text("x = 1\nx = 1\n")
    r = await w.call("os.fs.edit", {"path": "a.txt", "old": "x = 1", "new": "x = 2"})
    assert r.status == "error" and "occurs 2 times" in r.summary
    ok = await w.call("os.fs.edit", {"path": "a.txt", "old": "x = 1", "new": "x = 2", "replaceAll": True})
    assert ok.details["replacements"] == 2 and (w.ws / "a.txt").read_text() == "x = 2\nx = 2\n"


async def test_edit_does_not_ask_when_it_cannot_apply(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=1)
    (w.ws / "a.txt").write_text("abc")
    await w.call("os.fs.edit", {"path": "a.txt", "old": "zzz", "new": "q"})
    assert w.asker.requests == []


async def test_edit_refuses_binary_and_non_utf8_files(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    (w.ws / "b.bin").write_bytes(b"ab\x00cd")
    (w.ws / "l.txt").write_bytes(b"caf\xe9")
    assert "binary" in (await w.call("os.fs.edit", {"path": "b.bin", "old": "ab", "new": "x"})).summary
    assert "not valid UTF-8" in (await w.call("os.fs.edit", {"path": "l.txt", "old": "caf", "new": "x"})).summary


async def test_edit_applies_to_what_is_on_disk_after_the_yes(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    target = w.ws / "a.txt"
    target.write_text("alpha beta\n")

    async def approve_after_a_concurrent_change(request):
        w.asker.requests.append(request)
        if len(w.asker.requests) == 1:
            target.write_text("alpha beta gamma\n")
        return True

    w.gate.ask = approve_after_a_concurrent_change
    r = await w.call("os.fs.edit", {"path": "a.txt", "old": "beta", "new": "BETA"})
    assert r.status == "ok" and target.read_text() == "alpha BETA gamma\n"
    assert len(w.asker.requests) == 2  # the content changed: asked again


@pytest.mark.parametrize("bad", ["", "a\x00b"])
async def test_bad_paths_are_structured_errors(tmp_path, monkeypatch, bad) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    r = await w.call("os.fs.write", {"path": bad, "content": "x"})
    assert r.status == "error" and "path" in r.summary
    assert os.listdir(w.ws) == []
