"""What the chat tab needs from whatever runs the turns: the in-process `ChatOrchestrator`
(the runtime in this process) or the `RemoteOrchestrator` (a running `serve` reached over
HTTP). The app holds one of them and never asks which."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

# one line of a session's transcript as the chat shows it: ("user" | "assistant_reply", text)
TranscriptLine = tuple[str, str]


class ChatHost(Protocol):
    @property
    def session_id(self) -> str | None: ...

    @property
    def mode(self) -> str: ...

    @property
    def busy(self) -> bool: ...

    @property
    def paused(self) -> bool: ...

    @property
    def pending(self) -> Any:
        """A deque of queued messages (`.text` each), oldest first."""
        ...

    def submit(self, text: str, how: str | None = None, tool_choice: str | None = None) -> bool: ...

    def set_mode(self, mode: str) -> None: ...

    def resume(self) -> None: ...

    def clear_queue(self) -> list[Any]: ...

    def stop(self) -> bool: ...

    def open_session(self, session_id: str | None) -> None: ...

    def load_transcript(self, session_id: str, show: Callable[[list[TranscriptLine]], None]) -> None:
        """Read the session's user messages and replies and hand them to `show` (at once, or
        when they arrive); a failure is a chat notice."""
        ...
