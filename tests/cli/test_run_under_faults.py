"""`atomic-agent run` as a real process under faults: a slow model server,
SIGTERM mid-turn, a non-UTF-8 argument and a
damaged page of sessions.sqlite."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer
from tests.cli.run_cli import CLI, run_cli
from tests.plugins.sidecar.sidecar_process import SidecarProcess
from tests.turns.answered_once import unanswered_or_doubled

WAIT_S = 60.0
QUIET = {"plugins": {"disabled": ["memory_reflection", "memory_notes", "memory_profile"]}}


def quiet_state(tmp_path: Path, extra: dict | None = None) -> Path:
    state = tmp_path / "state"
    state.mkdir(exist_ok=True)
    (state / "config.json").write_text(json.dumps({**QUIET, **(extra or {})}))
    return state


def env_for(fake: FakeLlamaServer) -> dict[str, str]:
    return {"ATOMIC_AGENT_LLAMA_URL": fake.base_url, "ATOMIC_AGENT_STATE_DIR": ""}


def ledger(state: Path) -> list[tuple[str, str, str | None]]:
    with sqlite3.connect(state / "sessions.sqlite") as conn:
        return conn.execute("select text, state, category from turns order by admitted_order").fetchall()


def test_a_slow_model_server_fails_the_turn_as_provider_timeout_not_a_cancel(tmp_path: Path) -> None:
    state = quiet_state(tmp_path, {"llama": {"requestTimeoutS": 1}})
    with FakeLlamaServer(script=[Delay(4.0)]) as fake:
        result = run_cli(["--state-dir", str(state), "run", "how are you?"], env=env_for(fake))
    assert result.returncode == 1, result.stderr  # 130 would be "you cancelled it"
    assert "[provider_timeout]" in result.stderr and "cancelled" not in result.stderr
    assert "kept in session" in result.stderr
    assert ledger(state) == [("how are you?", "failed", "provider_timeout")]


def test_sigterm_mid_turn_parks_it_and_the_next_start_answers_it_once(tmp_path: Path) -> None:
    """The step in flight finishes (a tool call), then the turn is parked at the boundary."""
    state = quiet_state(tmp_path)
    first_step = json.dumps([{"tool": "tool.view", "args": {"name": "os.fs.read"}}])
    with FakeLlamaServer(script=[Delay(2.0, first_step)]) as fake:
        proc = subprocess.Popen([str(CLI), "--state-dir", str(state), "run", "a long question"],
                                env={**os.environ, **env_for(fake)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + WAIT_S
        while not fake.completion_bodies and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 143, err.decode()
        assert b"Traceback" not in err and b"kept in session" in err
        assert ledger(state) == [("a long question", "interrupted", None)]
        assert len(fake.completion_bodies) == 1  # no step began after the signal
        sidecar = SidecarProcess(tmp_path, {"ATOMIC_AGENT_LLAMA_URL": fake.base_url})  # the next start
        try:
            deadline = time.monotonic() + WAIT_S
            while unanswered_or_doubled(state, ["a long question"]) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert sidecar.close_stdin_and_wait() == 0
        finally:
            sidecar.kill()
    assert unanswered_or_doubled(state, ["a long question"]) == []


def test_a_non_utf8_argument_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    state = quiet_state(tmp_path)
    proc = subprocess.run([os.fsencode(CLI), b"--state-dir", os.fsencode(state), b"run", b"caf\xff"],
                          capture_output=True, timeout=WAIT_S,
                          env={**os.environ, "ATOMIC_AGENT_LLAMA_URL": "http://127.0.0.1:9", "ATOMIC_AGENT_STATE_DIR": ""})
    assert proc.returncode == 2, proc.stderr
    assert b"not valid Unicode" in proc.stderr and b"Traceback" not in proc.stderr
    assert not (state / "sessions.sqlite").exists() or ledger(state) == []


def corrupt_transcript_page(db: Path) -> None:
    """Overwrite the first page of the transcript table's b-tree with garbage (other tables intact)."""
    with sqlite3.connect(db) as conn:
        conn.execute("pragma wal_checkpoint(truncate)")
        page_size = conn.execute("pragma page_size").fetchone()[0]
        root = conn.execute("select rootpage from sqlite_master where name = 'transcript'").fetchone()[0]
    with open(db, "r+b") as handle:
        handle.seek((root - 1) * page_size)
        handle.write(b"\x0d\xff" * (page_size // 2))


def test_a_damaged_page_is_a_clear_error_and_the_turn_is_settled_not_left_queued(tmp_path: Path) -> None:
    state = quiet_state(tmp_path)
    with FakeLlamaServer() as fake:
        first = run_cli(["--state-dir", str(state), "--", "run", "hello"], env=env_for(fake))
        assert first.returncode == 0, first.stderr
        session = first.stderr.rsplit("session: ", 1)[1].split()[0]
        corrupt_transcript_page(state / "sessions.sqlite")
        again = run_cli(["--state-dir", str(state), "run", "--session", session, "still there?"], env=env_for(fake))
        shown = run_cli(["--state-dir", str(state), "sessions", "show", session], env=env_for(fake))
    for result in (again, shown):
        assert result.returncode == 1, result.stderr
        assert "Traceback" not in result.stderr and "damaged" in result.stderr, result.stderr
        assert "atomic-agent doctor" in result.stderr
    states = {text: turn_state for text, turn_state, _ in ledger(state)}
    assert states["still there?"] == "interrupted"  # settled, not left queued for ever
