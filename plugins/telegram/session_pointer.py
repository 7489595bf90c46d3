"""`<state>/telegram-session.json`: which session the Telegram channel talks in.

The channel's own session, never the TUI's or a CLI run's; `/new` rotates it. The pointer
is the only Telegram-specific session metadata, everything else is in sessions.sqlite.
"""

from __future__ import annotations

import json
from pathlib import Path

POINTER_FILE = "telegram-session.json"


def pointer_path(state_dir: Path) -> Path:
    return state_dir / POINTER_FILE


def read_pointer(state_dir: Path) -> str | None:
    try:
        data = json.loads(pointer_path(state_dir).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    session_id = data.get("sessionId") if isinstance(data, dict) else None
    return session_id if isinstance(session_id, str) and session_id else None


def write_pointer(state_dir: Path, session_id: str) -> None:
    from atomic_agent.api import write_atomic

    write_atomic(pointer_path(state_dir), json.dumps({"sessionId": session_id}) + "\n", mode=0o600)
