"""Standard input, one line at a time, for everything a chat command reads from it: the
REPL's messages and the terminal approval prompt's answers.

A blocked read cannot be stopped, so each line is read by a daemon thread and kept until a
reader takes it: a reader that stops waiting (a prompt withdrawn because its approval was
answered elsewhere or the turn was stopped; Ctrl+C at the REPL's prompt) leaves the line to
the next reader instead of swallowing it, and the process exits without waiting for a line
nobody asks for any more. One reader at a time (the REPL waits for its turn to end).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable

READ_CHUNK = 65536


class StdinLines:
    def __init__(self, readline: Callable[[], bytes]) -> None:
        self._readline = readline
        self._read: asyncio.Future[bytes] | None = None  # in flight, or read and not yet taken

    @classmethod
    def of_stdin(cls) -> StdinLines:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # a replaced stdin (a test runner's) is read as it is
            buffer = getattr(sys.stdin, "buffer", None)
            return cls(buffer.readline if buffer is not None else lambda: b"")  # none at all: at its end
        # the descriptor, not sys.stdin.buffer: a daemon thread blocked inside the buffered
        # reader at exit makes the interpreter abort when it closes that reader
        return cls(_descriptor_lines(fd))

    async def next_line(self) -> bytes:
        """The next line, b"" at the end of input."""
        if self._read is None:
            self._read = asyncio.get_running_loop().create_future()
            threading.Thread(target=self._read_one, args=(self._read,), name="stdin-line", daemon=True).start()
        read = self._read
        line = await asyncio.shield(read)  # a waiter cancelled meanwhile leaves the line to the next one
        self._read = None
        return line

    def _read_one(self, read: asyncio.Future[bytes]) -> None:
        try:
            line = self._readline()
        except (OSError, ValueError):  # a closed or unreadable stdin ends the input
            line = b""
        with contextlib.suppress(RuntimeError):  # the loop has closed: nobody waits for it any more
            read.get_loop().call_soon_threadsafe(_deliver, read, line)


def _deliver(read: asyncio.Future[bytes], line: bytes) -> None:
    if not read.done():
        read.set_result(line)


def _descriptor_lines(fd: int) -> Callable[[], bytes]:
    pending = bytearray()

    def readline() -> bytes:
        while b"\n" not in pending:
            chunk = os.read(fd, READ_CHUNK)
            if not chunk:  # the end of input: a last line without a newline still counts
                line = bytes(pending)
                pending.clear()
                return line
            pending.extend(chunk)
        end = pending.index(b"\n") + 1
        line = bytes(pending[:end])
        del pending[:end]
        return line

    return readline
