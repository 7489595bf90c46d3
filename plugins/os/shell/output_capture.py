"""Keep the start and the end of a child's output, count the rest.

A command may print 50 MB; the model needs the first lines (what happened) and the last
ones (how it ended), and the user needs to know how much was dropped. Memory stays at
head + tail bytes whatever the child writes.
"""

from __future__ import annotations

import attrs


@attrs.define
class CappedOutput:
    head_limit: int
    tail_limit: int
    head: bytearray = attrs.field(factory=bytearray)
    tail: bytearray = attrs.field(factory=bytearray)
    total: int = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk and self.tail_limit > 0:
            self.tail += chunk
            if len(self.tail) > self.tail_limit:
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def dropped(self) -> int:
        return self.total - len(self.head) - len(self.tail)

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        """The kept bytes as text; undecodable bytes become U+FFFD, a marker shows the gap."""
        head = bytes(self.head).decode("utf-8", errors="replace")
        if not self.tail:
            return head
        tail = bytes(self.tail).decode("utf-8", errors="replace")
        if self.dropped:
            return f"{head}\n…[{self.dropped} bytes omitted]…\n{tail}"
        return head + tail

    def is_utf8(self) -> bool:
        """Whether the kept bytes are valid UTF-8 (a character cut at the head/tail seam is not a fault)."""
        if not self.dropped:
            return _valid(bytes(self.head) + bytes(self.tail))
        head_ok = _valid(bytes(self.head), allow_cut_end=True)
        return head_ok and _valid(bytes(self.tail)[_continuation_prefix(self.tail):])


def _continuation_prefix(data: bytearray) -> int:
    count = 0
    while count < min(3, len(data)) and 0x80 <= data[count] < 0xC0:
        count += 1
    return count


def _valid(data: bytes, allow_cut_end: bool = False) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return allow_cut_end and exc.reason == "unexpected end of data"
    return True
