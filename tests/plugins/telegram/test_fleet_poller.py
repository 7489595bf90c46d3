"""A fleet of runtime processes on one PostgreSQL database and one bot: exactly one process
polls (the `telegram:<bot id>` lease), the others stand by; when the poller is SIGKILLed a
standby takes over within the lease's retry interval, starts from the shared offset, handles
no update twice and loses none, and settles the reply the dead host left mid-send as
`uncertain` instead of sending it again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from atomic_agent.api import create_runtime
from atomic_agent.plugins.telegram.fleet_poller_lease import LEASE_RETRY_S
from tests.plugins.postgresql.pg_kit import raw

from .channel_harness import OWNER, answering, boot_state, phone_sees, reply_texts, until, write_state
from .fake_bot_api import FakeBotApi

REPO = Path(__file__).resolve().parents[3]
REPLIES = {"first question": "first answer", "second question": "second answer", "third question": "third answer"}


def fleet_state(state: Path, api: FakeBotApi, database: Any) -> Path:
    """A host's state dir: the telegram block, the bot token and the fleet's database."""
    server, name = database
    write_state(state, api)
    config = json.loads((state / "config.json").read_text())
    config["storage"] = {"url": server.url(name)}
    (state / "config.json").write_text(json.dumps(config))
    return state


async def host(state: Path, database: Any) -> Any:
    environ = {"ATOMIC_AGENT_STORAGE_PASSWORD": database[0].password}
    return await create_runtime(boot_context=boot_state(state, environ=environ), provider=answering(REPLIES),
                                serving=True, environ=environ)


def channel_of(runtime: Any) -> Any:
    return runtime.service("telegram")


def handled(database: Any) -> list[tuple[int, str]]:
    with raw(database) as conn:
        return [(int(r[0]), r[1]) for r in conn.execute(
            "SELECT update_id, outcome FROM telegram_handled_updates ORDER BY update_id")]


async def test_two_hosts_on_one_database_poll_one_bot_once_and_handle_each_update_once(
        tmp_path: Path, bot_api: FakeBotApi, postgresql_database: Any):
    one = await host(fleet_state(tmp_path / "a", bot_api, postgresql_database), postgresql_database)
    two = await host(fleet_state(tmp_path / "b", bot_api, postgresql_database), postgresql_database)
    try:
        await until(lambda: {channel_of(one).state, channel_of(two).state} == {"up", "standby"}, 20,
                    "one host polling, the other standing by")
        poller, standby = (one, two) if channel_of(one).state == "up" else (two, one)
        assert "another host of the fleet polls this bot" in channel_of(standby).reason
        assert channel_of(standby).status()["polledBy"]["pid"] == os.getpid()
        ids = [bot_api.send_text(OWNER, "first question"), bot_api.send_text(OWNER, "second question")]
        await phone_sees(bot_api, lambda: len(reply_texts(bot_api)) >= 2)
        await asyncio.sleep(2 * LEASE_RETRY_S)  # the standby's retries meanwhile never poll
        assert channel_of(standby).state == "standby"
        assert bot_api.poll_conflicts == 0
        assert sorted(reply_texts(bot_api)) == ["first answer", "second answer"]
        assert [u for u, _ in handled(postgresql_database)] == ids
        # the poller stops: the standby takes the lease within about one retry interval
        await poller.close()
        started = time.monotonic()
        await until(lambda: channel_of(standby).state == "up", 4 * LEASE_RETRY_S + 5, "the standby takes over")
        print(f"takeover after a clean stop: {time.monotonic() - started:.2f} s")
        third = bot_api.send_text(OWNER, "third question")
        await phone_sees(bot_api, lambda: "third answer" in reply_texts(bot_api))
        assert reply_texts(bot_api).count("third answer") == 1
        assert [u for u, _ in handled(postgresql_database)] == [*ids, third]
    finally:
        for runtime in (one, two):
            await runtime.close()


async def test_a_sigkilled_poller_is_replaced_from_the_shared_offset_and_its_send_in_flight_is_uncertain(
        tmp_path: Path, bot_api: FakeBotApi, postgresql_database: Any):
    state_a = fleet_state(tmp_path / "a", bot_api, postgresql_database)
    child = subprocess.Popen([sys.executable, "-m", "tests.plugins.telegram.channel_child", str(state_a),
                              "DeliveryStore.chunk_sent"], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "ATOMIC_AGENT_STORAGE_PASSWORD": postgresql_database[0].password})
    standby = None
    try:
        await phone_sees(bot_api, lambda: "getUpdates" in bot_api.calls or child.poll() is not None, 60)
        assert child.poll() is None, child.stderr.read()  # type: ignore[union-attr]
        standby = await host(fleet_state(tmp_path / "b", bot_api, postgresql_database), postgresql_database)
        await until(lambda: channel_of(standby).state == "standby", 20, "the second host stands by")
        first = bot_api.send_text(OWNER, "first question")
        # the child sends the reply, then dies (SIGKILL) before recording that it arrived
        await asyncio.to_thread(child.wait, 60)
        killed = time.monotonic()
        await until(lambda: channel_of(standby).state == "up", 4 * LEASE_RETRY_S + 10, "the standby takes over")
        takeover_s = time.monotonic() - killed
        print(f"takeover after SIGKILL of the poller: {takeover_s:.2f} s")
        assert takeover_s < 2 * LEASE_RETRY_S + 5
        second = bot_api.send_text(OWNER, "second question")
        await phone_sees(bot_api, lambda: "second answer" in reply_texts(bot_api))
        await asyncio.sleep(LEASE_RETRY_S)  # a wrong resend of the first answer would show by now
        assert reply_texts(bot_api).count("first answer") == 1  # sent by the dead host, never again
        assert reply_texts(bot_api).count("second answer") == 1
        assert [u for u, _ in handled(postgresql_database)] == [first, second]  # none twice, none lost
        uncertain = channel_of(standby).store.in_state("uncertain")
        assert [d.chunks_sent for d in uncertain] == [0] and "stopped while this was being sent" in uncertain[0].error
        # (a 409 may come once: the dead poller's long poll is still open at the server until it times out)
    finally:
        if child.poll() is None:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
        if standby is not None:
            await standby.close()
