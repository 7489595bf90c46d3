"""The runtime's trace recorders: one per session, with a bounded number of open files.

A recorder opens its file on first use and keeps the descriptor; handing out a fresh recorder
per call leaked one descriptor per turn, so a long-running server ran out of them. Here each
session keeps one recorder, at most `max_open` are kept (the least recently used is closed
and forgotten; a later event of its session gets a recorder that resumes its seq from the
file), and `close_all` releases every one at shutdown. Forgetting matters as much as closing:
a server that starts a session per request kept one recorder object per session for ever
(issue 15: RSS grew with every request). A forgotten recorder a running turn still holds
stays reachable through a weak map, so one session never has two recorders at once.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path

from atomic_agent.config.core_blocks import TracingConfig
from atomic_agent.tracing.trace_recorder import TraceRecorder

DEFAULT_MAX_OPEN = 64


class TraceRecorders:
    def __init__(self, state_dir: Path, config: Callable[[], TracingConfig], max_open: int = DEFAULT_MAX_OPEN) -> None:
        self.state_dir = state_dir
        self._config = config
        self.max_open = max_open
        self._recorders: OrderedDict[str, TraceRecorder] = OrderedDict()  # most recently used last
        self._evicted: weakref.WeakValueDictionary[str, TraceRecorder] = weakref.WeakValueDictionary()

    def for_session(self, session_id: str) -> TraceRecorder:
        cfg = self._config()
        recorder = self._recorders.pop(session_id, None) or self._evicted.pop(session_id, None)
        if recorder is None or (recorder.max_bytes, recorder.enabled) != (cfg.max_bytes_per_session, cfg.enabled):
            if recorder is not None:
                recorder.close()  # the tracing config changed (hot reload): a recorder with the new limits
            recorder = TraceRecorder.for_session(self.state_dir, session_id, max_bytes=cfg.max_bytes_per_session,
                                                 enabled=cfg.enabled)
        self._recorders[session_id] = recorder
        while len(self._recorders) > self.max_open:
            older_id, older = self._recorders.popitem(last=False)
            older.close()  # a turn still holding it reopens the file on its next event
            self._evicted[older_id] = older  # weak: gone once no running turn holds it
        return recorder

    def open_files(self) -> int:
        return sum(1 for r in self._recorders.values() if r.is_open)

    def close_all(self) -> None:
        for recorder in self._recorders.values():
            recorder.close()
