"""Sidecar: a graceful stop cancelled every turn, queued ones included,
so acknowledged messages were lost. A real `sidecar` process gets a real SIGTERM (and
SIGINT) under load: it exits 0, every acknowledged turn ends with `turn_finished`
(interrupted when parked) or an `error` of code `turn_parked`, and a restart answers every
acknowledged message exactly once."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import Delay, FakeLlamaServer
from tests.plugins.sidecar.sidecar_process import WAIT_S, SidecarProcess
from tests.turns.answered_once import unanswered_or_doubled

INFERENCE_S = 1.5


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_under_load_parks_and_a_restart_answers_every_message_once(tmp_path: Path, sig: int) -> None:
    texts = [f"message {i}" for i in range(4)]
    config = {"sidecar": {"shutdownGraceS": 0}}
    with FakeLlamaServer(script=[Delay(INFERENCE_S)] * 8) as fake:
        env = {"ATOMIC_AGENT_LLAMA_URL": fake.base_url}
        sidecar = SidecarProcess(tmp_path, env, config=config, log="sidecar1.stderr")
        try:
            a = sidecar.call("create_session")["session"]["id"]
            b = sidecar.call("create_session")["session"]["id"]
            turns = [sidecar.call("send_message", text=text, sessionId=a if i < 3 else b)["turnId"]
                     for i, text in enumerate(texts)]  # each response: the admission is on disk
            deadline = time.monotonic() + WAIT_S
            while len(fake.completion_bodies) < 2 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert sidecar.signal_and_wait(sig) == 0
        finally:
            sidecar.kill()
        assert not sidecar.problems, sidecar.problems
        assert "Traceback" not in sidecar.stderr_text(), sidecar.stderr_text()
        events = sidecar.events()
        for turn_id in turns:
            mine = [e for e in events if e.get("turnId") == turn_id]
            finished = [e for e in mine if e["type"] == "turn_finished"]
            assert finished and finished[-1]["status"] in ("done", "interrupted"), mine
            if finished[-1]["status"] == "interrupted":
                assert any(e["type"] == "error" and e["code"] == "turn_parked" for e in mine), mine
        assert sum(1 for e in events if e["type"] == "turn_finished" and e["status"] == "interrupted") >= 2

        restarted = SidecarProcess(tmp_path, env, config=config, log="sidecar2.stderr")
        try:
            deadline = time.monotonic() + WAIT_S
            while unanswered_or_doubled(restarted.state, texts) and time.monotonic() < deadline:
                time.sleep(0.1)  # the restart resumes the parked turns on its own
            assert restarted.close_stdin_and_wait() == 0
        finally:
            restarted.kill()
        assert not restarted.problems, restarted.problems
    assert unanswered_or_doubled(restarted.state, texts) == []
    assert "Traceback" not in restarted.stderr_text()
