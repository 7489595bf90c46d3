"""Hostile inputs to the read tools: huge files, binary, bad encodings, special and secret files."""

from __future__ import annotations

import os
import tracemalloc

from tests.plugins.os.fs_kit import make_world

GIB = 1 << 30


async def test_1gb_file_read_is_never_held_in_memory(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    big = w.ws / "huge.log"
    with open(big, "wb") as handle:
        handle.write(b"".join(b"line %d\n" % i for i in range(1, 2001)))  # text past the sniffed block
        handle.truncate(GIB)  # sparse: a 1 GiB file on disk costs nothing
    tracemalloc.start()
    try:
        head = await w.call("os.fs.read", {"path": "huge.log", "limit": 5})
        past = await w.call("os.fs.read", {"path": "huge.log", "offset": 200})  # walks the whole file
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert head.summary.splitlines()[0] == "huge.log · lines 1-5 (more follow: offset=6)"
    assert past.status == "ok" and past.details["startLine"] == 200
    assert peak < 16 * 1024 * 1024


async def test_1gb_single_line_is_cut_and_the_file_walked_in_bounded_memory(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    big = w.ws / "oneline.txt"
    with open(big, "wb") as handle:
        handle.write(b"a" * 10_000)
        handle.truncate(GIB)  # one 1 GiB line with no newline
    tracemalloc.start()
    try:
        r = await w.call("os.fs.read", {"path": "oneline.txt"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    line = r.summary.splitlines()[-1]
    assert "line cut at 2000 chars" in line and len(line) < 2100 and peak < 16 * 1024 * 1024


async def test_1gb_file_hash_streams(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    with open(w.ws / "sparse.bin", "wb") as handle:
        handle.truncate(GIB)
    tracemalloc.start()
    try:
        r = await w.call("os.fs.hash", {"path": "sparse.bin", "algorithm": "md5"})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r.details["size"] == GIB and r.details["digest"] == "cd573cfaace07e7949bc0c46028904ff"
    assert peak < 16 * 1024 * 1024


async def test_binary_file_is_reported_as_binary(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "prog").write_bytes(b"\x7fELF\x02\x01\x01" + os.urandom(4096))
    r = await w.call("os.fs.read", {"path": "prog"})
    assert r.details["binary"] and "ELF executable" in r.summary and len(r.summary) < 200


async def test_non_utf8_content_is_marked_not_crashed(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.ws / "mixed.txt").write_bytes(b"ok\n\xff\xfe\xfd broken\n\xc3\x28 overlong\n")
    r = await w.call("os.fs.read", {"path": "mixed.txt"})
    assert r.status == "ok" and r.details["invalidUtf8Lines"] == 2 and "\ufffd" in r.summary


async def test_invalid_utf8_file_name_is_readable(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    name = os.fsdecode(b"bad\xffname.txt")
    (w.ws / name).write_text("inside\n")
    r = await w.call("os.fs.read", {"path": name})
    assert r.status == "ok" and "inside" in r.summary


async def test_dev_zero_is_refused(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    r = await w.call("os.fs.read", {"path": "/dev/zero"})
    assert r.status == "error" and "not a regular file" in r.summary


async def test_fifo_read_is_refused_instead_of_hanging(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    os.mkfifo(w.ws / "fifo")
    for tool, args in (("os.fs.read", {"path": "fifo"}), ("os.fs.hash", {"path": "fifo"}),
                       ("os.fs.read_document", {"path": "fifo"})):
        assert (await w.call(tool, args)).status == "error", tool


async def test_proc_self_environ_is_never_read(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    r = await w.call("os.fs.read", {"path": "/proc/self/environ"})
    assert r.status == "error" and "secrets" in r.summary
    assert (await w.call("os.fs.hash", {"path": f"/proc/{os.getpid()}/environ"})).status == "error"


async def test_agent_dotenv_is_never_read_even_through_a_symlink(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    (w.state / ".env").write_text("OPENROUTER_API_KEY=sk-secret\n")
    (w.ws / "innocent.txt").symlink_to(w.state / ".env")
    for path in (str(w.state / ".env"), "innocent.txt"):
        r = await w.call("os.fs.read", {"path": path})
        assert r.status == "error" and "sk-secret" not in r.summary
    diff = await w.call("os.fs.diff", {"a": "innocent.txt", "content": ""})
    assert diff.status == "error" and "sk-secret" not in diff.summary


async def test_nul_byte_and_over_long_paths_are_structured_errors(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    nul = await w.call("os.fs.read", {"path": "a\x00/etc/passwd"})
    assert nul.status == "error" and "NUL" in nul.summary
    long = await w.call("os.fs.read", {"path": "a" * 5000})
    assert long.status == "error" and "characters long" in long.summary
    component = await w.call("os.fs.read", {"path": "b" * 300})
    assert component.status == "error" and "Traceback" not in component.summary
