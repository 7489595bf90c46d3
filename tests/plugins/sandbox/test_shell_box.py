"""`os.shell.run` inside real bubblewrap through the real runtime: the workspace is writable,
everything else is not, the network is gone unless the call was approved, the state dir is
unreadable, the ladder's ask drops only where documented, and `always` never runs unboxed.
Each box test has an unboxed control that shows the same call succeeding."""

from __future__ import annotations

import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from atomic_agent.testing.scripted_provider import calls
from tests.plugins.sandbox.sandbox_kit import sandbox_runtime, shell, shell_results

BOXED = "ran in the sandbox"
REPLY = "loopback-says-hello"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside /tmp (so the box's private /tmp does not hide it): visible in the
    box read-only, holding one file."""
    base = Path(tempfile.mkdtemp(prefix="atomic-sandbox-outside-", dir="/var/tmp"))
    (base / "existing.txt").write_text("original\n")
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def loopback_server() -> Iterator[str]:
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            body = REPLY.encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


AUTO = {"mode": "auto"}
FETCH = """import sys, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())
except OSError as exc:
    sys.exit(f"fetch failed: {exc}")
"""


def fetch(workspace: Path, url: str) -> str:
    """A call of `python fetch.py URL` (a script in the workspace: an ordinary command to the guard)."""
    (workspace / "fetch.py").write_text(FETCH)
    return shell(sys.executable, ["fetch.py", url])


async def test_auto_mode_runs_an_ordinary_command_in_the_box_without_asking_and_the_workspace_write_lands(
        tmp_path: Path, workspace: Path) -> None:
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("echo inside > made.txt"), shell("mkdir", ["-p", "a/b"])],
                                   level=1, sandbox=AUTO)
    first, second = await shell_results(rt, workspace)
    assert asked == []
    assert first["status"] == "ok" and BOXED in first["summary"] and "no network" in first["summary"]
    assert second["status"] == "ok" and (workspace / "a" / "b").is_dir()
    assert (workspace / "made.txt").read_text() == "inside\n"


async def test_a_write_outside_the_workspace_fails_inside_the_box(tmp_path: Path, workspace: Path,
                                                                  outside: Path) -> None:
    script = [shell("touch", [str(outside / "new.txt")]), shell("cp", ["/etc/hostname", str(outside / "existing.txt")]),
              shell("cat", [str(outside / "existing.txt")])]
    rt, asked, _ = sandbox_runtime(tmp_path, script, level=1, sandbox=AUTO)
    touch, copy, read = await shell_results(rt, workspace)
    assert asked == []
    assert touch["status"] == "error" and "Read-only file system" in touch["summary"]
    assert copy["status"] == "error" and "Read-only file system" in copy["summary"]
    assert read["status"] == "ok" and "original" in read["summary"]  # visible, just not writable
    assert not (outside / "new.txt").exists() and (outside / "existing.txt").read_text() == "original\n"


async def test_the_same_outside_write_succeeds_unboxed(tmp_path: Path, workspace: Path, outside: Path) -> None:
    # the control: without the box (and at a level that runs shell unasked) the write lands
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("touch", [str(outside / "new.txt")])], level=4,
                                   sandbox={"mode": "off"})
    [touch] = await shell_results(rt, workspace)
    assert touch["status"] == "ok" and BOXED not in touch["summary"] and (outside / "new.txt").exists()


async def test_a_network_call_to_a_loopback_server_fails_inside_the_box(tmp_path: Path, workspace: Path,
                                                                        loopback_server: str) -> None:
    rt, asked, _ = sandbox_runtime(tmp_path, [fetch(workspace, loopback_server)], level=1, sandbox=AUTO)
    [result] = await shell_results(rt, workspace)
    assert asked == [] and result["status"] == "error" and BOXED in result["summary"]
    assert REPLY not in result["summary"] and "fetch failed" in result["summary"]


async def test_the_same_network_call_succeeds_unboxed(tmp_path: Path, workspace: Path, loopback_server: str) -> None:
    rt, _, _ = sandbox_runtime(tmp_path, [fetch(workspace, loopback_server)], level=4, sandbox={"mode": "off"})
    [result] = await shell_results(rt, workspace)
    assert result["status"] == "ok" and REPLY in result["summary"]


async def test_always_mode_gives_an_approved_call_the_network_but_still_no_writes_outside(
        tmp_path: Path, workspace: Path, outside: Path, loopback_server: str) -> None:
    # level 4 approves ordinary shell commands, so the call's approval allowed egress
    script = [fetch(workspace, loopback_server), shell("touch", [str(outside / "n.txt")])]
    rt, asked, _ = sandbox_runtime(tmp_path, script, level=4, sandbox={"mode": "always"})
    fetched, touched = await shell_results(rt, workspace)
    assert asked == []
    assert fetched["status"] == "ok" and REPLY in fetched["summary"] and BOXED in fetched["summary"]
    assert touched["status"] == "error" and "Read-only file system" in touched["summary"]
    assert not (outside / "n.txt").exists()


async def test_the_state_dir_is_unreadable_inside_the_box(tmp_path: Path, workspace: Path) -> None:
    state = tmp_path / "state"
    script = [shell("cat", [str(state / "config.json")]), shell("ls", ["-A", str(state)])]
    rt, asked, _ = sandbox_runtime(tmp_path, script, level=1, sandbox=AUTO)
    read, listing = await shell_results(rt, workspace)
    assert (state / "config.json").is_file()  # there on the host
    assert read["status"] == "error" and "No such file" in read["summary"] and "approvalLevel" not in read["summary"]
    assert listing["status"] == "ok" and "config.json" not in listing["summary"]
    assert "sessions.sqlite" not in listing["summary"]


async def test_always_mode_with_bwrap_missing_fails_the_call_with_the_fix(tmp_path: Path, workspace: Path) -> None:
    missing = str(tmp_path / "no-such-dir" / "bwrap")
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("touch", ["should-not-exist"])], level=4,
                                   sandbox={"mode": "always", "bwrapPath": missing})
    [result] = await shell_results(rt, workspace)
    assert result["status"] == "error" and asked == []
    assert "bubblewrap was not found" in result["summary"] and missing in result["summary"]
    assert "apt-get install bubblewrap" in result["summary"]
    assert not (workspace / "should-not-exist").exists()  # never silently unboxed


async def test_auto_mode_with_bwrap_missing_asks_as_if_the_sandbox_were_off(tmp_path: Path, workspace: Path) -> None:
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("touch", ["asked-first"])], level=1, answers=["y"],
                                   sandbox={"mode": "auto", "bwrapPath": str(tmp_path / "missing-bwrap")})
    [result] = await shell_results(rt, workspace)
    assert [r.category for r in asked] == ["shell"]
    assert result["status"] == "ok" and BOXED not in result["summary"] and (workspace / "asked-first").exists()


async def test_auto_mode_still_asks_for_dangerous_commands_and_runs_them_unboxed_once_approved(
        tmp_path: Path, workspace: Path) -> None:
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("sh", ["-c", "echo hi > d.txt"])], level=1, answers=["y"],
                                   sandbox=AUTO)
    [result] = await shell_results(rt, workspace)
    assert [r.category for r in asked] == ["shell_dangerous"]
    assert result["status"] == "ok" and BOXED not in result["summary"]


async def test_auto_mode_leaves_level_4_unboxed(tmp_path: Path, workspace: Path) -> None:
    # level 4 does not ask for ordinary commands, so auto has no ask to replace
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("touch", ["x.txt"])], level=4, sandbox=AUTO)
    [result] = await shell_results(rt, workspace)
    assert asked == [] and result["status"] == "ok" and BOXED not in result["summary"]


async def test_a_session_grant_keeps_its_calls_unboxed_in_auto_mode(tmp_path: Path, workspace: Path) -> None:
    # a grant already answers the question, so there is no ask for the box to replace
    script = [shell("cp", ["/etc/hostname", "granted.txt"]), shell("touch", ["boxed.txt"])]
    rt, asked, _ = sandbox_runtime(tmp_path, script, level=1, sandbox=AUTO)
    session = rt.open_session(None, workspace)
    rt.gate.grant(session.id, "shell", "cp")
    granted, boxed = await shell_results(rt, workspace, session.id)
    assert asked == []
    assert granted["status"] == "ok" and BOXED not in granted["summary"]
    assert boxed["status"] == "ok" and BOXED in boxed["summary"]


async def test_run_and_its_sockets_are_empty_inside_the_box(tmp_path: Path, workspace: Path) -> None:
    # a read-only mount does not stop connect() on a Unix socket; /run (docker, D-Bus) is covered
    rt, _, _ = sandbox_runtime(tmp_path, [shell("ls", ["-A", "/run"])], level=1, sandbox=AUTO)
    [listing] = await shell_results(rt, workspace)
    assert listing["status"] == "ok" and BOXED in listing["summary"] and "(no output)" in listing["summary"]


async def test_a_boxed_command_past_its_timeout_is_killed(tmp_path: Path, workspace: Path) -> None:
    rt, _, _ = sandbox_runtime(tmp_path, [calls(("os.shell.run", {"cmd": "sleep", "args": ["60"], "timeout_s": 1}))],
                               level=1, sandbox=AUTO)
    [result] = await shell_results(rt, workspace)
    assert result["status"] == "error" and "timed out after 1s" in result["summary"] and BOXED in result["summary"]


FAKE_BWRAP_WITHOUT_USERNS = """#!/bin/sh
echo "bwrap: No permissions to creating new namespace, likely because the kernel does not allow \
non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'." >&2
exit 1
"""


async def test_always_mode_without_user_namespaces_fails_the_call_with_the_sysctl_fix(tmp_path: Path,
                                                                                      workspace: Path) -> None:
    # a scripted bwrap that answers as Debian's does when user namespaces are off
    fake = tmp_path / "bwrap"
    fake.write_text(FAKE_BWRAP_WITHOUT_USERNS)
    fake.chmod(0o755)
    rt, asked, _ = sandbox_runtime(tmp_path, [shell("touch", ["never"])], level=4,
                                   sandbox={"mode": "always", "bwrapPath": str(fake)})
    [result] = await shell_results(rt, workspace)
    assert result["status"] == "error" and asked == [] and not (workspace / "never").exists()
    assert "could not create its namespaces" in result["summary"]
    assert "kernel.unprivileged_userns_clone=1" in result["summary"]


READ_KEY = """import pathlib
# the path comes from a file, so the guard sees an ordinary script run, not a credential path
print(pathlib.Path(pathlib.Path("target.txt").read_text().strip()).read_text())
"""


async def test_a_script_boxed_instead_of_asking_cannot_read_the_credential_stores(
        tmp_path: Path, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = Path(tempfile.mkdtemp(prefix="atomic-sandbox-home-", dir="/var/tmp"))
    try:
        (home / ".ssh").mkdir()
        (home / ".ssh" / "id_test").write_text("PRIVATE-KEY-MATERIAL\n")
        monkeypatch.setenv("HOME", str(home))
        (workspace / "readkey.py").write_text(READ_KEY)
        (workspace / "target.txt").write_text(str(home / ".ssh" / "id_test"))
        call = shell(sys.executable, ["readkey.py"])
        rt, asked, _ = sandbox_runtime(tmp_path / "boxed", [call], level=1, sandbox=AUTO)
        [boxed] = await shell_results(rt, workspace)
        assert asked == [] and boxed["status"] == "error" and BOXED in boxed["summary"]
        assert "PRIVATE-KEY-MATERIAL" not in boxed["summary"]
        # the control: the same script unboxed (level 4 runs it unasked) reads the key
        rt, _, _ = sandbox_runtime(tmp_path / "plain", [call], level=4, sandbox={"mode": "off"})
        [plain] = await shell_results(rt, workspace)
        assert plain["status"] == "ok" and "PRIVATE-KEY-MATERIAL" in plain["summary"]
    finally:
        shutil.rmtree(home, ignore_errors=True)
