"""The database going away under real `serve` processes: accepted messages are not lost.

Admission refuses before it acknowledges: with the server down a message gets 503
`storage_unavailable` (retryable; nothing written), and the same request sent again with its
Idempotency-Key once the server is back gets exactly one answer. A restart of the server
under load (a failover) drops every host's owner lease at once; the hosts renew them within
the leases' grace, so none fences out another's running turns (nothing is interrupted)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest

from atomic_agent.plugins.llama_server.testing.fake_llama_server import DEFAULT_REPLY, Delay, FakeLlamaServer
from atomic_agent.plugins.postgresql.testing.serve_fleet import (
    AUTH,
    check_fleet,
    create_sessions,
    drive,
    message_text,
    start_host,
    stop_host,
)
from tests.plugins.postgresql.pg_kit import raw, url_of

SESSIONS = 50
PER_SESSION = 4


def test_a_message_sent_while_the_database_is_down_is_refused_unacknowledged_and_answered_once_on_retry(
        tmp_path: Path, postgresql_database: Any) -> None:
    server, name = postgresql_database
    conninfo = url_of(postgresql_database).connect_kwargs(10)
    with FakeLlamaServer() as fake:
        host = start_host(tmp_path, 0, server.url(name), server.password, fake.base_url)
        try:
            session_id = create_sessions(host, 1)[0]
            request = {"json": {"model": "atomic-agent", "messages": [{"role": "user", "content": message_text(0, 0)}]},
                       "headers": {**AUTH, "Idempotency-Key": "down-0", "X-Atomic-Session": session_id},
                       "timeout": 60}
            server.stop()
            try:
                refused = httpx.post(f"{host.base}/v1/chat/completions", **request)  # type: ignore[arg-type]
            finally:
                server.start()
            assert refused.status_code == 503, refused.text
            assert refused.json()["error"]["code"] == "storage_unavailable"
            assert refused.headers["x-should-retry"] == "true" and server.password not in refused.text
            with raw(postgresql_database) as conn:
                assert conn.execute("select count(*) from turns").fetchone()[0] == 0  # nothing was admitted
            answered = httpx.post(f"{host.base}/v1/chat/completions", **request)  # type: ignore[arg-type]
            assert answered.status_code == 200, answered.text
            again = httpx.post(f"{host.base}/v1/chat/completions", **request)  # type: ignore[arg-type]
            assert again.json()["id"] == answered.json()["id"]  # the same answer, not a second turn
        finally:
            stop_host(host)
    assert check_fleet(conninfo, [session_id], 1) == []


@pytest.mark.xfail(strict=False, reason=(
    "known gap (issue 37): a store write that meets the restart mid-turn fails that turn with 500 turn_crashed "
    "(no hold-and-retry), and a turn whose start failed so stays queued under its live owner until the next "
    "message of its session catches it up: its keyed retry gets no answer"))
async def test_a_restart_of_the_database_under_load_loses_no_accepted_message(
        tmp_path: Path, postgresql_database: Any) -> None:
    server, name = postgresql_database
    conninfo = url_of(postgresql_database).connect_kwargs(10)
    restarts: list[threading.Thread] = []
    with FakeLlamaServer(default_reply=Delay(0.05, DEFAULT_REPLY), total_slots=8) as fake:
        fleet = [start_host(tmp_path, i, server.url(name), server.password, fake.base_url) for i in range(2)]
        try:
            session_ids = create_sessions(fleet[0], SESSIONS)

            def restart_mid_run(answered: int) -> None:
                if answered == SESSIONS * PER_SESSION // 4 and not restarts:
                    restarts.append(threading.Thread(target=server.restart))
                    restarts[0].start()

            run = await drive(fleet, session_ids, PER_SESSION, conninfo, on_answer=restart_mid_run, timeout_s=60)
            print(f"\n2 serve processes, PostgreSQL restarted after {SESSIONS * PER_SESSION // 4} answers: "
                  f"{run.summary()}; refused before acknowledgement: {run.refused}")
        finally:
            for thread in restarts:
                await asyncio.to_thread(thread.join)
            for host in fleet:
                stop_host(host)
    texts = [message_text(s, j) for s in range(SESSIONS) for j in range(PER_SESSION)]
    assert {t: run.answered.get(t, 0) for t in texts} == dict.fromkeys(texts, 1)
    assert check_fleet(conninfo, session_ids, PER_SESSION) == []
    with raw(postgresql_database) as conn:
        assert conn.execute("select count(*) from turns where state = 'interrupted'").fetchone()[0] == 0
