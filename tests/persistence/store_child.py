"""A second OS process on the same store, for the cross-process persistence tests.

Usage: store_child.py sqlite PATH COMMAND ARGS...
It prints one JSON line per event and waits for a line on stdin where a command says so, so a
test can line several children up and release them at once (no sleeps, no timing).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from atomic_agent.persistence.session_queues import SessionQueues
from atomic_agent.persistence.sqlite_store import SqliteStore


def say(value: object) -> None:
    sys.stdout.write(json.dumps(value) + "\n")
    sys.stdout.flush()


def wait_for_go() -> None:
    say("ready")
    sys.stdin.readline()


async def run(path: Path, command: str, args: list[str]) -> None:
    store = SqliteStore.open(path, busy_timeout_s=30.0)
    if command == "write_if_absent":
        key, value = args
        wait_for_go()
        async with store.transaction() as tx:
            say(await tx.write_if_absent(key, value))
    elif command == "claim":
        keys = args
        wait_for_go()
        won = []
        for key in keys:
            async with store.transaction(durable=False) as tx:
                if await tx.claim(key) is not None:
                    won.append(key)
        say(won)
    elif command == "cas_increment":
        key, count = args[0], int(args[1])
        wait_for_go()
        retries = 0
        for _ in range(count):
            while True:
                current = await store.get(key)
                async with store.transaction() as tx:
                    if await tx.compare_and_set(key, current, current + 1):
                        break
                retries += 1
        say({"retries": retries})
    elif command == "accept":
        session, count, writer = args[0], int(args[1]), args[2]
        queues = SessionQueues(writer)
        wait_for_go()
        accepted = [(await queues.submit(store, session, "send", f"{writer}-{i}")).message_id for i in range(count)]
        say(accepted)
    elif command == "commit_and_ack":
        stream, count = args[0], int(args[1])
        for i in range(count):
            async with store.transaction(durable=True) as tx:
                seq = await tx.append(stream, {"n": i})
            say({"acked": seq})  # printed only after the commit returned
        say("idle")
        time.sleep(3600)  # wait to be killed
    elif command == "die_inside_transaction":
        stream = args[0]
        async with store.transaction(durable=True) as tx:
            await tx.append(stream, {"never": "committed"})
            await tx.put("half.written", 1)
            say("inside")
            time.sleep(3600)  # SIGKILL lands here, mid-transaction
    else:
        raise SystemExit(f"unknown command {command!r}")
    await store.close()


def main() -> None:
    kind, path, command, *args = sys.argv[1:]
    if kind != "sqlite":
        raise SystemExit(f"store_child.py knows only the sqlite store, not {kind!r}")
    asyncio.run(run(Path(path), command, args))
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
