"""Wake-ups for approval waiters: the database announces every record that stops being
pending (trigger `approval_records_settled`, schema step m006, on the channel
`atomic_agent_approvals`, payload the record's id), and one LISTEN connection per process
wakes the waiters of that id at once, whichever host answered, cancelled or expired it.

Without it every waiting call read its record every 0.1 s: many parked approvals across a
fleet made a steady load of reads for nothing. A notice is only a hint to read again; the
record decides. While the listen connection is down (a server restart) `listening` is False
and waiters poll as before; on reconnect every waiter is woken once, since a notice sent
while nobody listened is lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading

from .database_url import DatabaseUrl

CHANNEL = "atomic_agent_approvals"
RECEIVE_S = 0.5  # how long one wait for notices lasts: the bound on noticing close()
RECONNECT_S = (0.5, 1.0, 2.0, 5.0)  # pauses between tries to listen again after the connection dropped


class ApprovalNotices:
    def __init__(self, url: DatabaseUrl, connect_timeout_s: int) -> None:
        self._url = url
        self._connect_timeout_s = connect_timeout_s
        self._lock = threading.Lock()
        self._waiters: dict[str, set[tuple[asyncio.AbstractEventLoop, asyncio.Event]]] = {}
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self.listening = False  # LISTEN is in place on a live connection: a settle reaches waiters at once

    def watch(self, approval_id: str) -> asyncio.Event:
        """An event set whenever `approval_id` may have settled; register it before reading the
        record, so a settle between the read and the wait is not missed. The listener thread
        starts with the first watch (a process that never waits opens no connection)."""
        event = asyncio.Event()
        with self._lock:
            self._waiters.setdefault(approval_id, set()).add((asyncio.get_running_loop(), event))
            if self._thread is None and not self._stop.is_set():
                self._thread = threading.Thread(target=self._listen, name="atomic-agent-approval-notices", daemon=True)
                self._thread.start()
        return event

    def unwatch(self, approval_id: str, event: asyncio.Event) -> None:
        with self._lock:
            waiters = self._waiters.get(approval_id, set())
            waiters.difference_update({w for w in waiters if w[1] is event})
            if not waiters:
                self._waiters.pop(approval_id, None)

    def close(self) -> None:
        self._stop.set()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=RECEIVE_S * 4)

    def _wake(self, approval_id: str | None) -> None:
        """Wake the waiters of `approval_id` (None: every waiter)."""
        with self._lock:
            if approval_id is None:
                waiters = [w for ws in self._waiters.values() for w in ws]
            else:
                waiters = list(self._waiters.get(approval_id, ()))
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits there any more
                loop.call_soon_threadsafe(event.set)

    def _listen(self) -> None:
        import psycopg

        from .pg_backend import connect  # it builds the records that use this module

        failures = 0
        while not self._stop.is_set():
            try:
                with connect(self._url, self._connect_timeout_s) as conn:
                    conn.execute(f"LISTEN {CHANNEL}")
                    self.listening, failures = True, 0
                    self._wake(None)  # what settled while nobody listened is read again now
                    while not self._stop.is_set():
                        for notice in conn.notifies(timeout=RECEIVE_S):
                            self._wake(notice.payload)
            except psycopg.Error:
                pass  # waiters poll meanwhile; the message would only repeat what their reads say
            finally:
                self.listening = False
            self._stop.wait(RECONNECT_S[min(failures, len(RECONNECT_S) - 1)])
            failures += 1
