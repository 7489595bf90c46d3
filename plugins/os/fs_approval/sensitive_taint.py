"""Which sessions have read a credential store (an approved `sensitive_read`) in this process.

The egress policy asks before such a session sends anything to a host outside
`http.allowedHosts`, at every level below 5: data derived from a key, token or cookie
must not leave the machine because the standing level happens to allow network calls.
The mark lasts for the session's life in this process (tools do not see turn
boundaries, so it errs on the side of asking), and is kept in memory only.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

MAX_SESSIONS = 4096


class SensitiveTaint:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reads: OrderedDict[str, list[str]] = OrderedDict()

    def mark(self, session_id: str, what: str) -> None:
        with self._lock:
            reads = self._reads.pop(session_id, [])
            if what not in reads:
                reads.append(what)
            self._reads[session_id] = reads[-16:]
            while len(self._reads) > MAX_SESSIONS:
                self._reads.popitem(last=False)

    def reads_of(self, session_id: str) -> list[str]:
        with self._lock:
            return list(self._reads.get(session_id, ()))

    def clear(self, session_id: str | None = None) -> None:
        with self._lock:
            if session_id is None:
                self._reads.clear()
            else:
                self._reads.pop(session_id, None)


TAINT = SensitiveTaint()
