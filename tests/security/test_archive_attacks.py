"""Hostile archives: zip-slip, absolute names, link and device entries, bombs, planted symlinks."""

from __future__ import annotations

import io
import tarfile
import zipfile

import pytest

from tests.plugins.os.fs_archive_kit import make_gz, make_tar, make_zip
from tests.plugins.os.fs_kit import make_world


async def _extract(w, archive: str, **args):
    return await w.call("os.fs.archive.extract", {"path": archive, "dest": "out", **args})


def _nothing_written(w) -> bool:
    return not (w.ws / "out").exists() and list(w.outside.iterdir()) == [] and not (w.home / "evil").exists()


@pytest.mark.parametrize("name", ["../../outside/evil", "a/../../../outside/evil", "..\\..\\outside\\evil",
                                  "./../outside/evil"])
async def test_zip_slip_member_is_refused(tmp_path, monkeypatch, name) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_zip(w.ws / "slip.zip", {"ok.txt": b"ok", name: b"pwned"})
    r = await _extract(w, "slip.zip")
    assert r.status == "error" and "`..`" in r.summary and _nothing_written(w)


@pytest.mark.parametrize("name", ["/tmp/evil-abs", "C:/Windows/evil", "\\\\server\\share\\evil"])
async def test_absolute_member_is_refused(tmp_path, monkeypatch, name) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_zip(w.ws / "abs.zip", {name: b"x"})
    r = await _extract(w, "abs.zip")
    assert r.status == "error" and "absolute path" in r.summary and _nothing_written(w)


async def test_tar_absolute_path_member_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_tar(w.ws / "abs.tar", {str(w.outside / "evil"): b"x"}, mode="w")
    r = await _extract(w, "abs.tar")
    assert r.status == "error" and "absolute path" in r.summary and _nothing_written(w)


async def test_tar_symlink_entry_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_tar(w.ws / "ln.tar.gz", {"readme": b"hi"}, symlinks={"passwd": "/etc/passwd"})
    r = await _extract(w, "ln.tar.gz")
    assert r.status == "error" and "symlink entry -> /etc/passwd" in r.summary and _nothing_written(w)


async def test_tar_symlink_then_file_through_it_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_tar(w.ws / "chain.tar", {"escape/evil": b"pwned"}, mode="w", symlinks={"escape": str(w.outside)})
    r = await _extract(w, "chain.tar")
    assert r.status == "error" and _nothing_written(w)


async def test_tar_hardlink_entry_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_tar(w.ws / "hl.tar", {}, mode="w", hardlinks={"shadow": "/etc/shadow"})
    r = await _extract(w, "hl.tar")
    assert r.status == "error" and "hardlink entry" in r.summary and _nothing_written(w)


async def test_zip_symlink_entry_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_zip(w.ws / "ln.zip", {"a.txt": b"a"}, symlinks={"key": "/home/user/.ssh/id_rsa"})
    r = await _extract(w, "ln.zip")
    assert r.status == "error" and "symlink entry" in r.summary and _nothing_written(w)


async def test_tar_device_entry_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    with tarfile.open(w.ws / "dev.tar", "w") as archive:
        info = tarfile.TarInfo("sda")
        info.type = tarfile.CHRTYPE
        archive.addfile(info)
    r = await _extract(w, "dev.tar")
    assert r.status == "error" and "device entry" in r.summary and _nothing_written(w)


async def test_zip_bomb_by_inflation_ratio_is_refused_before_writing(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_zip(w.ws / "bomb.zip", {"zeros.bin": bytes(20 * 1024 * 1024)})
    r = await _extract(w, "bomb.zip")
    assert r.status == "error" and "decompression bomb" in r.summary and _nothing_written(w)


async def test_declared_size_over_the_cap_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_zip(w.ws / "big.zip", {"a.txt": b"x" * 5000})
    r = await _extract(w, "big.zip", maxBytes=1000)
    assert r.status == "error" and "over the cap" in r.summary and _nothing_written(w)


async def test_tar_gz_over_the_byte_cap_writes_nothing(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_tar(w.ws / "small.tgz", {"a.txt": b"a" * 3000, "b.txt": b"b" * 3000})
    r = await _extract(w, "small.tgz", maxBytes=4000)
    assert r.status == "error" and _nothing_written(w)


async def test_gz_bomb_is_stopped_by_the_byte_budget(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    make_gz(w.ws / "bomb.gz", bytes(8 * 1024 * 1024))  # size unknown until decompressed
    r = await _extract(w, "bomb.gz", maxBytes=1024 * 1024)
    assert r.status == "error" and "decompressed" in r.summary and _nothing_written(w)


async def test_zip_member_lying_about_its_size_is_caught(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("a.txt", b"A" * 4096)
    raw = bytearray(buffer.getvalue())
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 24:central + 28] = (16).to_bytes(4, "little")  # central directory claims 16 bytes
    (w.ws / "liar.zip").write_bytes(bytes(raw))
    r = await _extract(w, "liar.zip", maxBytes=1024)
    assert r.status == "error" and not (w.ws / "out" / "a.txt").exists()


async def test_planted_symlink_directory_inside_dest_is_not_followed(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    (w.ws / "out").mkdir()
    (w.ws / "out" / "sub").symlink_to(w.outside, target_is_directory=True)
    make_zip(w.ws / "inner.zip", {"sub/evil": b"pwned"})
    r = await _extract(w, "inner.zip")
    assert r.status == "error" and list(w.outside.iterdir()) == []


async def test_planted_dangling_symlink_at_a_member_name_is_not_followed(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    (w.ws / "out").mkdir()
    (w.ws / "out" / "file.txt").symlink_to(w.outside / "created.txt")
    make_zip(w.ws / "d.zip", {"file.txt": b"pwned"})
    r = await _extract(w, "d.zip", overwrite=True)
    assert not (w.outside / "created.txt").exists()
    if r.status == "ok":  # overwrite replaces the link itself, never writes through it
        assert not (w.ws / "out" / "file.txt").is_symlink()


async def test_duplicate_entries_are_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    with zipfile.ZipFile(w.ws / "dup.zip", "w") as archive:
        archive.writestr("a.txt", b"1")
        with pytest.warns(UserWarning):
            archive.writestr("a.txt", b"2")
    r = await _extract(w, "dup.zip")
    assert r.status == "error" and "same entry twice" in r.summary


async def test_extracted_files_lose_setuid_bits(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    with tarfile.open(w.ws / "suid.tar", "w") as archive:
        info = tarfile.TarInfo("tool")
        info.size = 2
        info.mode = 0o4755
        archive.addfile(info, io.BytesIO(b"#!"))
    assert (await _extract(w, "suid.tar")).status == "ok"
    assert (w.ws / "out" / "tool").stat().st_mode & 0o7777 == 0o755


async def test_read_entry_of_a_bomb_reads_only_max_bytes(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    make_zip(w.ws / "bomb.zip", {"zeros.txt": b"0" * (30 * 1024 * 1024)})
    r = await w.call("os.fs.archive.read_entry", {"path": "bomb.zip", "entry": "zeros.txt", "maxBytes": 1000})
    assert r.status == "ok" and r.details["bytes"] == 1000 and r.details["truncated"]
