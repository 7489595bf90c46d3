"""os.fs.hash (streamed digests) and os.fs.diff (unified)."""

from __future__ import annotations

import hashlib

import pytest

from tests.plugins.os.fs_kit import make_world


@pytest.mark.parametrize("algorithm", ["md5", "sha1", "sha256", "sha512"])
async def test_hash_matches_hashlib(tmp_path, monkeypatch, algorithm) -> None:
    w = make_world(tmp_path, monkeypatch)
    data = bytes(range(256)) * 9000  # over one 1 MiB block
    (w.ws / "blob").write_bytes(data)
    r = await w.call("os.fs.hash", {"path": "blob", "algorithm": algorithm})
    assert r.details["digest"] == hashlib.new(algorithm, data).hexdigest() and r.details["size"] == len(data)


async def test_hash_defaults_to_sha256_and_rejects_unknown_algorithms(tmp_path, monkeypatch) -> None:
    from atomic_agent.api import args_errors

    w = make_world(tmp_path, monkeypatch)
    (w.ws / "f").write_bytes(b"x")
    assert (await w.call("os.fs.hash", {"path": "f"})).details["algorithm"] == "sha256"
    assert args_errors(w.specs["os.fs.hash"].args_schema, {"path": "f", "algorithm": "crc32"})


async def test_diff_two_files_unified(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.txt").write_text("one\ntwo\nthree\n")
    (w.ws / "b.txt").write_text("one\n2\nthree\n")
    r = await w.call("os.fs.diff", {"a": "a.txt", "b": "b.txt"})
    assert r.summary.splitlines() == ["+1 -1", "--- a.txt", "+++ b.txt", "@@ -1,3 +1,3 @@", " one", "-two", "+2",
                                      " three"]


async def test_diff_against_proposed_content_and_identical(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.txt").write_text("x")
    r = await w.call("os.fs.diff", {"a": "a.txt", "content": "y"})
    assert "\\ No newline at end of file" in r.summary and r.details["added"] == 1
    assert (await w.call("os.fs.diff", {"a": "a.txt", "content": "x"})).details["identical"] is True


async def test_diff_needs_exactly_one_of_b_or_content(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.txt").write_text("x")
    assert (await w.call("os.fs.diff", {"a": "a.txt"})).status == "error"
    assert (await w.call("os.fs.diff", {"a": "a.txt", "b": "a.txt", "content": "q"})).status == "error"


async def test_diff_refuses_binary(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "a.bin").write_bytes(b"\x00\x01")
    assert "binary" in (await w.call("os.fs.diff", {"a": "a.bin", "content": "x"})).summary
