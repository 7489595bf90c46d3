"""Two and three real `serve` processes on one PostgreSQL, each with a state directory of its
own: 1,000 interleaved requests across 50 sessions (the size issue 37 asks for), the messages of one session sent to
different hosts and waiting in its lane at once. One host is SIGKILLed mid-run; its clients
send again with the same Idempotency-Key to a live host. Every message is in its session
once, in the order it was admitted, with a reply after it; every client got one answer; no
turn is left queued or running (the dead host's work was taken over: fleet_takeover)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import DEFAULT_REPLY, Delay, FakeLlamaServer
from atomic_agent.plugins.postgresql.testing.serve_fleet import (
    check_fleet,
    create_sessions,
    drive,
    message_text,
    start_host,
    stop_host,
)
from tests.plugins.postgresql.pg_kit import url_of

SESSIONS = 50
PER_SESSION = 20  # 1,000 requests
INFERENCE_S = 0.05  # each model call: turns are mid-inference when the host dies


# which host dies varies: the first of two, the last of three (a different host of the rotation
# each message of a session visits)
@pytest.mark.parametrize(("hosts", "killed"), [(2, 0), (3, 2)], ids=["two-hosts-kill-first", "three-hosts-kill-last"])
async def test_a_fleet_answers_every_message_once_in_session_order_after_a_host_is_killed(
        tmp_path: Path, postgresql_database: Any, hosts: int, killed: int) -> None:
    server, name = postgresql_database
    conninfo = url_of(postgresql_database).connect_kwargs(10)
    with FakeLlamaServer(default_reply=Delay(INFERENCE_S, DEFAULT_REPLY), total_slots=8) as fake:
        fleet = [start_host(tmp_path, i, server.url(name), server.password, fake.base_url) for i in range(hosts)]
        try:
            session_ids = create_sessions(fleet[0], SESSIONS)

            def kill_mid_run(answered: int) -> None:
                if answered == SESSIONS * PER_SESSION // 4 and fleet[killed].proc.poll() is None:
                    fleet[killed].proc.send_signal(signal.SIGKILL)

            run = await drive(fleet, session_ids, PER_SESSION, conninfo, on_answer=kill_mid_run)
            print(f"\n{hosts} serve processes, host {killed} SIGKILLed after {SESSIONS * PER_SESSION // 4} answers: "
                  + run.summary())
        finally:
            for host in fleet:
                stop_host(host)
    assert fleet[killed].proc.returncode == -signal.SIGKILL
    assert run.retries > 0  # the kill hit requests in flight
    texts = [message_text(s, j) for s in range(SESSIONS) for j in range(PER_SESSION)]
    assert {t: run.answered.get(t, 0) for t in texts} == dict.fromkeys(texts, 1)
    assert check_fleet(conninfo, session_ids, PER_SESSION) == []
