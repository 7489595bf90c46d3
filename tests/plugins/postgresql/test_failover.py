"""The database going away under real `serve` processes: accepted messages are not lost.

Admission refuses before it acknowledges: with the server down a message gets 503
`storage_unavailable` (retryable; nothing written), and the same request sent again with its
Idempotency-Key once the server is back gets exactly one answer. A restart of the server
under load (a failover) drops every host's owner lease at once; the hosts renew them within
the leases' grace. A turn whose start met the restart is tried again (hold and retry); one cut
off mid-way is answered 503 (retry with the same key) and settled once the database is back:
interrupted, its calls answered, and the continuation that answers its message run, so every
message still gets exactly one answer, in its session's order."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import httpx

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
        # a turn the restart cut off is interrupted (by its host once the database is back, or by
        # another host that counted it dead meanwhile) and answered by its continuation: counted
        fenced = conn.execute(
            "select count(*) from turn_audit a join turn_audit r on r.turn_id = a.turn_id and r.to_state = 'running' "
            "where a.from_state = 'running' and a.to_state = 'interrupted' and a.owner is distinct from r.owner"
        ).fetchone()[0]
        cut_off = conn.execute("select count(*) from turns where state = 'interrupted'").fetchone()[0]
    print(f"turns cut off by the restart and answered by their continuation: {cut_off} ({fenced} interrupted by "
          "another host)")
