"""Helpers shared by the conformance modules."""

from __future__ import annotations

import asyncio
import threading

import pytest

from atomic_agent.persistence.store_protocol import StoreReader
from tests.persistence.store_harness import StoreHarness


class SimulatedCrash(BaseException):
    """BaseException, so no `except Exception` in store code can swallow it."""


def needs_processes(harness: StoreHarness) -> None:
    if not harness.cross_process:
        pytest.skip(f"the {harness.name} store lives in one process")


async def seqs(reader: StoreReader, stream: str) -> list[int]:
    return [r.seq for r in await reader.read(stream)]


def in_thread(fn, *args):  # run an async fn on its own event loop in a new OS thread
    result: list = []
    thread = threading.Thread(target=lambda: result.append(asyncio.run(fn(*args))))
    thread.start()
    return thread, result
