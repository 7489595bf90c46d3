"""on a read-only state dir and on a full disk `doctor` called both
healthy databases damaged and advised moving them aside, and `--move-aside` then crashed
with `OSError: [Errno 30]`. Each case runs the real CLI inside a private mount namespace
(`unshare`): a read-only bind mount of the state dir, or a tmpfs filled to the last byte."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import FakeLlamaServer
from tests.cli.run_cli import CLI, run_cli

UNSHARE = shutil.which("unshare")
READ_ONLY = 'mount --bind "$STATE" "$STATE" && mount -o remount,bind,ro "$STATE" && exec "$@"'
FULL = ('mount -t tmpfs -o size=4m tmpfs "$FULLDIR" && cp -a "$STATE/." "$FULLDIR/" && '
        '(dd if=/dev/zero of="$FULLDIR/filler" bs=4k 2>/dev/null; true) && exec "$@"')


def _namespaces_work() -> bool:
    if UNSHARE is None:
        return False
    probe = subprocess.run([UNSHARE, "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt 2>/dev/null || "
                            "mount -t tmpfs tmpfs /tmp"], capture_output=True)
    return probe.returncode == 0


pytestmark = pytest.mark.skipif(not _namespaces_work(), reason="needs unshare with user+mount namespaces")


def in_namespace(script: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    assert UNSHARE is not None
    return subprocess.run([UNSHARE, "-rm", "sh", "-c", script, "sh", str(CLI), *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "ATOMIC_AGENT_STATE_DIR": "", **env})


@pytest.fixture
def healthy_state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    state.mkdir()
    (state / "config.json").write_text(json.dumps({"plugins": {"disabled": ["memory_reflection", "memory_notes",
                                                                             "memory_profile"]}}))
    with FakeLlamaServer() as fake:
        result = run_cli(["--state-dir", str(state), "run", "hello"],
                         env={"ATOMIC_AGENT_LLAMA_URL": fake.base_url, "ATOMIC_AGENT_STATE_DIR": ""})
    assert result.returncode == 0, result.stderr
    with __import__("sqlite3").connect(state / "memory.sqlite") as conn:
        conn.execute("create table if not exists probe (x)")
    return state


def findings(result: subprocess.CompletedProcess[str]) -> dict[str, dict]:
    return {f["check"]: f for f in json.loads(result.stdout)}


def test_a_read_only_state_dir_is_reported_unwritable_not_damaged(healthy_state: Path) -> None:
    env = {"STATE": str(healthy_state)}
    report = in_namespace(READ_ONLY, env, "--state-dir", str(healthy_state), "doctor", "--json")
    moved = in_namespace(READ_ONLY, env, "--state-dir", str(healthy_state), "doctor", "--move-aside",
                         "sessions.sqlite")
    assert report.returncode == 1, report.stderr
    found = findings(report)
    assert "not writable" in found["state dir"]["detail"]
    for name in ("sessions.sqlite", "memory.sqlite"):
        assert "damaged" not in found[name]["detail"] and "intact" in found[name]["detail"], found[name]
        assert "--move-aside" not in found[name]["advice"] and "not damaged" in found[name]["advice"]
    assert moved.returncode == 2 and "not damaged" in moved.stderr and "Traceback" not in moved.stderr
    assert run_cli(["--state-dir", str(healthy_state), "doctor"]).returncode == 0  # writable again: all fine


def test_move_aside_in_a_read_only_dir_explains_instead_of_crashing(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    damaged = b"not a database at all" * 100
    (state / "sessions.sqlite").write_bytes(damaged)
    result = in_namespace(READ_ONLY, {"STATE": str(state)}, "--state-dir", str(state), "doctor", "--move-aside",
                          "sessions.sqlite")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "OSError" not in result.stderr
    assert "could not be renamed" in result.stderr and "writable" in result.stderr
    assert (state / "sessions.sqlite").read_bytes() == damaged


def test_a_full_disk_is_reported_full_not_damaged(healthy_state: Path, tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    env = {"STATE": str(healthy_state), "FULLDIR": str(full)}
    report = in_namespace(FULL, env, "--state-dir", str(full), "doctor", "--json")
    assert report.returncode == 1, report.stderr
    found = findings(report)
    assert "disk is full" in found["state dir"]["detail"]
    for name in ("sessions.sqlite", "memory.sqlite"):
        assert "damaged" not in found[name]["detail"] and "disk is full" in found[name]["detail"], found[name]
        assert "--move-aside" not in found[name]["advice"]


def test_commands_on_a_read_only_or_full_state_dir_explain_instead_of_a_traceback(healthy_state: Path,
                                                                                tmp_path: Path) -> None:
    full = tmp_path / "full"
    full.mkdir()
    with FakeLlamaServer() as fake:
        env = {"STATE": str(healthy_state), "FULLDIR": str(full), "ATOMIC_AGENT_LLAMA_URL": fake.base_url}
        read_only = in_namespace(READ_ONLY, env, "--state-dir", str(healthy_state), "run", "hi again")
        on_full = in_namespace(FULL, env, "--state-dir", str(full), "run", "hi again")
    for result in (read_only, on_full):
        assert result.returncode != 0
        assert "Traceback" not in result.stderr, result.stderr
        assert "[tool]" not in result.stderr  # a full disk is the environment's fault, never a tool's
    assert "read-only" in read_only.stderr
    assert "full" in on_full.stderr
