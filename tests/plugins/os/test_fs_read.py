"""os.fs.read: offset, limit, line numbers, binary, non-UTF-8, refused files."""

from __future__ import annotations

import os

from tests.plugins.os.fs_kit import make_world


async def test_read_numbers_lines_and_reports_the_range(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    r = await w.call("os.fs.read", {"path": "a.txt", "offset": 3, "limit": 2})
    assert r.status == "ok"
    assert r.summary.splitlines() == ["a.txt · lines 3-4 (more follow: offset=5)", "     3\tline 3", "     4\tline 4"]
    assert r.details["more"] is True


async def test_read_whole_file_says_of_n(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.txt").write_text("x\ny")
    r = await w.call("os.fs.read", {"path": "a.txt", "lineNumbers": False})
    assert r.summary.splitlines() == ["a.txt · lines 1-2 of 2", "x", "y"]


async def test_read_offset_past_the_end_and_empty_file(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.txt").write_text("one\n")
    (w.ws / "e.txt").write_text("")
    assert "offset 5 is past the end" in (await w.call("os.fs.read", {"path": "a.txt", "offset": 5})).summary
    assert "(empty file)" in (await w.call("os.fs.read", {"path": "e.txt"})).summary


async def test_binary_file_is_reported_not_dumped(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(100))
    r = await w.call("os.fs.read", {"path": "img.png"})
    assert r.status == "ok" and r.details["binary"] is True and "PNG image" in r.summary and "IHDR" not in r.summary


async def test_non_utf8_bytes_are_replaced_and_flagged(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "latin.txt").write_bytes("caf\u00e9\n".encode("latin-1") + b"ok\n")
    r = await w.call("os.fs.read", {"path": "latin.txt"})
    assert "caf\ufffd" in r.summary and "not valid UTF-8" in r.summary and r.details["invalidUtf8Lines"] == 1


async def test_directory_and_missing_file_give_clear_errors(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    assert "is a directory; use os.fs.list" in (await w.call("os.fs.read", {"path": "."})).summary
    missing = await w.call("os.fs.read", {"path": "nope.txt"})
    assert missing.status == "error" and "no such file: nope.txt" in missing.summary


async def test_fifo_is_refused_instead_of_blocking(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    os.mkfifo(w.ws / "pipe")
    r = await w.call("os.fs.read", {"path": "pipe"})
    assert r.status == "error" and "not a regular file" in r.summary


async def test_over_long_line_is_cut_not_held(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "long.txt").write_text("a" * 300_000 + "\nnext\n")
    r = await w.call("os.fs.read", {"path": "long.txt"})
    lines = r.summary.splitlines()
    assert lines[1] == "note: over-long lines were cut"
    assert "line cut" in lines[2] and len(lines[2]) < 2100 and lines[3].endswith("next")


async def test_crlf_and_bom_are_handled(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "win.txt").write_bytes(b"\xef\xbb\xbfhello\r\nworld\r\n")
    r = await w.call("os.fs.read", {"path": "win.txt", "lineNumbers": False})
    assert r.summary.splitlines()[1:] == ["hello", "world"]


async def test_tilde_paths_expand_to_home(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.home / "notes.txt").write_text("n\n")
    r = await w.call("os.fs.read", {"path": "~/notes.txt"})
    assert r.status == "ok" and "n" in r.summary
