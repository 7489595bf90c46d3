"""os.fs.archive.list / read_entry / extract on zip, tar, tar.gz and gz."""

from __future__ import annotations

from atomic_agent.api import ApprovalAnswer
from tests.plugins.os.fs_archive_kit import make_gz, make_tar, make_zip
from tests.plugins.os.fs_kit import make_world


async def test_list_zip_and_tar_gz(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    make_zip(w.ws / "a.zip", {"docs/readme.md": b"# hi\n", "bin/tool": b"\x00\x01"})
    make_tar(w.ws / "b.tar.gz", {"src/main.py": b"print(1)\n"}, symlinks={"src/link": "/etc/passwd"})
    z = await w.call("os.fs.archive.list", {"path": "a.zip"})
    assert z.details["kind"] == "zip" and z.details["count"] == 2 and "docs/readme.md" in z.summary
    t = await w.call("os.fs.archive.list", {"path": "b.tar.gz"})
    assert t.details["kind"] == "tar" and "[symlink -> /etc/passwd]" in t.summary


async def test_read_entry_as_text_without_extracting(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    make_tar(w.ws / "b.tgz", {"src/main.py": b"print(1)\n" * 100})
    r = await w.call("os.fs.archive.read_entry", {"path": "b.tgz", "entry": "src/main.py", "maxBytes": 18})
    assert r.summary.splitlines()[1:] == ["print(1)", "print(1)"] and r.details["truncated"]
    assert list(w.ws.iterdir()) == [w.ws / "b.tgz"]
    missing = await w.call("os.fs.archive.read_entry", {"path": "b.tgz", "entry": "nope"})
    assert missing.status == "error" and "archive.list" in missing.summary


async def test_read_entry_of_binary_member_is_reported(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    make_zip(w.ws / "a.zip", {"x.bin": b"\x7fELF\x00\x00"})
    assert "binary (ELF" in (await w.call("os.fs.archive.read_entry", {"path": "a.zip", "entry": "x.bin"})).summary


async def test_extract_zip_into_the_default_dest_asks_as_home(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=2, answers=[ApprovalAnswer.once()])
    make_zip(w.ws / "data.zip", {"a/b.txt": b"B", "c.txt": b"C"})
    r = await w.call("os.fs.archive.extract", {"path": "data.zip"})
    assert r.status == "ok", r.summary
    assert (w.ws / "data" / "a" / "b.txt").read_bytes() == b"B" and (w.ws / "data" / "c.txt").read_bytes() == b"C"
    assert w.asker.categories == ["fs_write_home"]  # extraction is never silent at the workspace level


async def test_extract_tar_gz_and_plain_gz(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=3)
    make_tar(w.ws / "src.tar.gz", {"pkg/mod.py": b"x = 1\n"})
    make_gz(w.ws / "log.txt.gz", b"line\n" * 3)
    assert (await w.call("os.fs.archive.extract", {"path": "src.tar.gz", "dest": "out"})).status == "ok"
    assert (w.ws / "out" / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (await w.call("os.fs.archive.extract", {"path": "log.txt.gz", "dest": "logs"})).status == "ok"
    assert (w.ws / "logs" / "log.txt").read_text() == "line\n" * 3


async def test_extract_does_not_overwrite_unless_asked(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=3)
    make_zip(w.ws / "d.zip", {"f.txt": b"new"})
    (w.ws / "d").mkdir()
    (w.ws / "d" / "f.txt").write_text("old")
    r = await w.call("os.fs.archive.extract", {"path": "d.zip"})
    assert r.status == "error" and "already exists" in r.summary and (w.ws / "d" / "f.txt").read_text() == "old"
    assert (await w.call("os.fs.archive.extract", {"path": "d.zip", "overwrite": True})).status == "ok"
    assert (w.ws / "d" / "f.txt").read_text() == "new"


async def test_extract_denied_writes_nothing(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=1)
    make_zip(w.ws / "d.zip", {"f.txt": b"x"})
    r = await w.call("os.fs.archive.extract", {"path": "d.zip"})
    assert r.status == "error" and r.details["denied"] and not (w.ws / "d").exists()


async def test_not_an_archive_is_a_clear_error(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "plain.txt").write_text("hello")
    r = await w.call("os.fs.archive.list", {"path": "plain.txt"})
    assert r.status == "error" and "not a zip, tar" in r.summary
