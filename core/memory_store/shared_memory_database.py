"""One memory.sqlite connection per runtime, shared by every memory plugin of that runtime.

Keyed weakly by the runtime object, so a runtime that is dropped without closing does not
keep its connection alive, and several runtimes in one process (tests, embedders) never
share one. Plugins call `release_memory_database` from `runtime_stopping`.
"""

from __future__ import annotations

import os
import weakref
from typing import Any

from atomic_agent.memory_store.memory_database import DEFAULT_BUSY_TIMEOUT_S, MemoryDatabase, memory_db_path

BUSY_TIMEOUT_ENV = "ATOMIC_AGENT_MEMORY_BUSY_TIMEOUT_MS"

_OPEN: weakref.WeakKeyDictionary[Any, MemoryDatabase] = weakref.WeakKeyDictionary()


def _busy_timeout_s(runtime: Any) -> float:
    environ = getattr(runtime, "environ", None) or os.environ
    raw = str(environ.get(BUSY_TIMEOUT_ENV, "")).strip()
    if raw.isdigit():
        return max(int(raw), 1) / 1000
    return DEFAULT_BUSY_TIMEOUT_S


def memory_database_for(runtime: Any) -> MemoryDatabase:
    """The runtime's open memory database, opened (and migrated) on first use."""
    database = _OPEN.get(runtime)
    if database is None or database.closed:
        database = MemoryDatabase.open(memory_db_path(runtime.state_dir), _busy_timeout_s(runtime))
        _OPEN[runtime] = database
    return database


def release_memory_database(runtime: Any) -> None:
    """Close the runtime's connection if one was opened (safe to call more than once)."""
    database = _OPEN.pop(runtime, None)
    if database is not None:
        database.close()
