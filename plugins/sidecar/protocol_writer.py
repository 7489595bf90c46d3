"""Writes protocol lines: one compact JSON object per line, flushed at once.

stdout belongs to the protocol alone. A host that went away (broken pipe) silences the
writer instead of crashing the turns that are still finishing their durable writes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, BinaryIO


class ProtocolWriter:
    def __init__(self, sink: BinaryIO, check: Callable[[dict[str, Any]], None] | None = None) -> None:
        self._sink = sink
        self._check = check  # tests pass a schema check here
        self.closed = False
        self.lines_written = 0

    def send(self, message: dict[str, Any]) -> None:
        if self._check is not None:
            self._check(message)
        if self.closed:
            return
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":"), default=str) + "\n"
        try:
            self._sink.write(line.encode("utf-8", "surrogateescape"))
            self._sink.flush()
            self.lines_written += 1
        except (BrokenPipeError, ValueError, OSError) as exc:  # ValueError: the sink was closed
            self.closed = True
            print(f"atomic-agent sidecar: the host stopped reading stdout ({type(exc).__name__}); "
                  "later messages are dropped", file=sys.stderr)
