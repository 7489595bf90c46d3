"""os.fs.patch: dry run by default, exact hunks, all or nothing, one approval per patch."""

from __future__ import annotations

from atomic_agent.api import ApprovalAnswer
from atomic_agent.plugins.os.fs.patch_apply import apply_hunks
from atomic_agent.plugins.os.fs.patch_parse import parse_patch
from tests.plugins.os.fs_kit import make_world

PATCH = """diff --git a/x.txt b/x.txt
--- a/x.txt
+++ b/x.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
--- a/y.txt
+++ b/y.txt
@@ -1 +1,2 @@
 alpha
+beta
--- /dev/null
+++ b/new.txt
@@ -0,0 +1 @@
+created
"""


def _files(ws) -> None:
    (ws / "x.txt").write_text("one\ntwo\nthree\n")
    (ws / "y.txt").write_text("alpha\n")


async def test_patch_is_a_dry_run_by_default(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    _files(w.ws)
    r = await w.call("os.fs.patch", {"patch": PATCH})
    assert r.status == "ok" and r.details["dryRun"] and "applies cleanly to 3 file(s)" in r.summary
    assert (w.ws / "x.txt").read_text() == "one\ntwo\nthree\n" and not (w.ws / "new.txt").exists()
    assert w.asker.requests == []  # a dry run changes nothing, so it asks nothing


async def test_patch_applies_every_file_after_one_approval(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, answers=[ApprovalAnswer.once()])
    _files(w.ws)
    r = await w.call("os.fs.patch", {"patch": PATCH, "dryRun": False})
    assert r.status == "ok", r.summary
    assert (w.ws / "x.txt").read_text() == "one\nTWO\nthree\n"
    assert (w.ws / "y.txt").read_text() == "alpha\nbeta\n" and (w.ws / "new.txt").read_text() == "created\n"
    assert len(w.asker.requests) == 1 and w.asker.categories == ["fs_write_workspace"]


async def test_patch_is_all_or_nothing(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    _files(w.ws)
    (w.ws / "y.txt").write_text("changed\n")  # the second file's hunk no longer matches
    r = await w.call("os.fs.patch", {"patch": PATCH, "dryRun": False})
    assert r.status == "error" and "nothing was written" in r.summary and "y.txt" in r.summary
    assert (w.ws / "x.txt").read_text() == "one\ntwo\nthree\n" and not (w.ws / "new.txt").exists()


async def test_patch_refuses_deletions(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch, level=5)
    (w.ws / "gone.txt").write_text("bye\n")
    r = await w.call("os.fs.patch", {"patch": "--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
                                     "dryRun": False})
    assert r.status == "error" and "os.fs.trash" in r.summary and (w.ws / "gone.txt").exists()


async def test_patch_with_a_malformed_diff_is_a_clear_error(tmp_path, monkeypatch) -> None:
    w = make_world(tmp_path, monkeypatch)
    assert "no file headers" in (await w.call("os.fs.patch", {"patch": "just text"})).summary
    bad = "--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n one\n"
    assert "ends early" in (await w.call("os.fs.patch", {"patch": bad})).summary


def test_hunks_find_their_place_after_a_shift_and_keep_crlf() -> None:
    files = parse_patch("--- a/f\n+++ b/f\n@@ -1,2 +1,2 @@\n b\n-c\n+C\n")
    assert apply_hunks("x\ny\nb\nc\n", files[0].hunks) == "x\ny\nb\nC\n"
    assert apply_hunks("b\r\nc\r\n", files[0].hunks) == "b\r\nC\r\n"


def test_no_newline_at_end_markers() -> None:
    files = parse_patch("--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n\\ No newline at end of file\n+new\n"
                        "\\ No newline at end of file\n")
    assert apply_hunks("old", files[0].hunks) == "new"
