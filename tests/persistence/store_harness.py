"""How the persistence tests open each store implementation: a harness opens any number of
handles on one underlying storage (one file, or one MemoryStorage), and says which
process-level cases the implementation can take part in."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.persistence.memory_store import MemoryStorage, MemoryStore
from atomic_agent.persistence.sqlite_store import SqliteStore
from atomic_agent.persistence.store_protocol import Store

CHILD_SCRIPT = Path(__file__).with_name("store_child.py")


@attrs.define
class StoreHarness:
    name: str
    opener: Callable[..., Store]
    # argv tail that lets store_child.py open the same storage; None: the storage lives only in
    # this process (cross-process and kill cases are skipped)
    child_args: list[str] | None
    opened: list[Store] = attrs.field(factory=list)

    def open(self, **options: Any) -> Store:
        store = self.opener(**options)
        self.opened.append(store)
        return store

    @property
    def cross_process(self) -> bool:
        return self.child_args is not None

    async def close_all(self) -> None:
        for store in self.opened:
            await store.close()


def sqlite_harness(directory: Path) -> StoreHarness:
    path = directory / "store.sqlite"
    return StoreHarness("sqlite", lambda **o: SqliteStore.open(path, **o), ["sqlite", str(path)])


def memory_harness() -> StoreHarness:
    storage = MemoryStorage()
    return StoreHarness("memory", lambda **o: MemoryStore(storage, **o), None)


HARNESSES: dict[str, Callable[[Path], StoreHarness]] = {
    "sqlite": sqlite_harness,
    "memory": lambda _directory: memory_harness(),
}


class Child:
    """A store_child.py process driven line by line: it prints JSON lines, reads commands."""

    def __init__(self, harness: StoreHarness, *args: str) -> None:
        assert harness.child_args is not None
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, str(CHILD_SCRIPT), *harness.child_args, *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, env=env)

    def line(self) -> Any:
        text = self.proc.stdout.readline()
        if not text:
            raise AssertionError(f"child exited early: {self.proc.wait()} {self.proc.stderr.read()}")
        return json.loads(text)

    async def aline(self) -> Any:
        return await asyncio.to_thread(self.line)

    def send(self, text: str = "go") -> None:
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def finish(self) -> int:
        if self.proc.stdin and not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=60)
        self.proc.stdout.close()
        self.proc.stderr.close()
        return code

    def kill9(self) -> None:
        self.proc.kill()  # SIGKILL
        self.proc.wait(timeout=60)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except (BrokenPipeError, OSError):
                pass
