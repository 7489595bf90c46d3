"""Request lines from stdin, with a byte cap per line.

A daemon thread reads the file descriptor (pipes and regular files alike, and it never
keeps the process alive at exit) and hands complete lines to the event loop. A line
longer than the cap is skipped up to its newline and reported as `LineTooLong`, so one
runaway write costs an error response, not the process's memory.
"""

from __future__ import annotations

import asyncio
import os
import threading

import attrs

READ_CHUNK = 64 * 1024


@attrs.frozen
class LineTooLong:
    size: int  # bytes seen before the newline (at least the cap)


@attrs.frozen
class EndOfInput:
    pass


Item = bytes | LineTooLong | EndOfInput


class LineSplitter:
    """Splits a byte stream into lines of at most `max_bytes` (the newline not counted)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._buffer = bytearray()
        self._skipping = 0  # > 0: inside an oversized line, this many bytes dropped so far

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        out: list[bytes | LineTooLong] = []
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start:newline]
            if self._skipping:
                self._skipping += len(piece)
            else:
                self._buffer += piece
                if len(self._buffer) > self.max_bytes:
                    self._skipping = len(self._buffer)
                    self._buffer.clear()
            if newline < 0:
                break
            if self._skipping:
                out.append(LineTooLong(self._skipping))
                self._skipping = 0
            else:
                out.append(bytes(self._buffer))
                self._buffer.clear()
            start = newline + 1
        return out

    def finish(self) -> list[bytes | LineTooLong]:
        """What is left at end of input (a last line without a newline still counts)."""
        if self._skipping:
            size, self._skipping = self._skipping, 0
            return [LineTooLong(size)]
        if self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            return [line]
        return []


class FdLineSource:
    """Lines from a file descriptor, delivered to an asyncio queue by a daemon thread."""

    def __init__(self, fd: int, max_bytes: int) -> None:
        self._fd = fd
        self._splitter = LineSplitter(max_bytes)
        self._queue: asyncio.Queue[Item] = asyncio.Queue()
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        threading.Thread(target=self._pump, name="sidecar-stdin", daemon=True).start()

    async def next(self) -> Item:
        return await self._queue.get()

    def _deliver(self, item: Item) -> None:
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)
        except RuntimeError:  # the loop already closed: nobody is listening any more
            pass

    def _pump(self) -> None:
        while True:
            try:
                chunk = os.read(self._fd, READ_CHUNK)
            except InterruptedError:
                continue
            except OSError:
                chunk = b""
            if not chunk:
                for item in self._splitter.finish():
                    self._deliver(item)
                self._deliver(EndOfInput())
                return
            for item in self._splitter.feed(chunk):
                self._deliver(item)
