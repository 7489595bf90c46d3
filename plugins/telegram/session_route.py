"""The channel's session, and the approval route to the owner's phone that goes with it.

The session is the one `<state>/telegram-session` names (made when missing or gone); the
approval gate routes that session's questions to the channel's approval host, and only that
session's: a rotation moves the route, a stop removes it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .session_pointer import read_pointer, write_pointer

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


class SessionRoute:
    def __init__(self, runtime: RuntimeView, state_dir: Path, approval_host: Callable[[Any], Awaitable[bool]]) -> None:
        self._runtime = runtime
        self._state_dir = state_dir
        self._host = approval_host  # one object: the gate unroutes only its own route
        self.routed: str | None = None

    def session_id(self) -> str:
        from atomic_agent.api import SessionNotFoundError

        current = read_pointer(self._state_dir)
        if current is not None:
            try:
                self._runtime.sessions.load(current)
            except SessionNotFoundError:
                current = None
        if current is None:
            current = self._runtime.open_session(None).id
            write_pointer(self._state_dir, current)
        if self.routed != current:
            self._route_to(current)
        return current

    def rotate(self) -> str:
        new = self._runtime.open_session(None).id
        write_pointer(self._state_dir, new)
        self._route_to(new)
        return new

    def unroute(self) -> None:
        if self.routed is not None:
            self._runtime.service("approval_gate").unroute_session(self.routed, self._host)
            self.routed = None

    def _route_to(self, session_id: str) -> None:
        gate = self._runtime.service("approval_gate")
        if self.routed is not None:
            gate.unroute_session(self.routed, self._host)
        gate.route_session(session_id, self._host, surface="telegram")
        self.routed = session_id
