"""`<state>/telegram-pairing.json`: a short window in which the first private DM claims
ownership of the bot.

A file, so `atomic-agent telegram pair` in another process can open it for the running
channel; the channel reads it only when a non-owner private message arrives (no timer).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

PAIRING_FILE = "telegram-pairing.json"
DEFAULT_WINDOW_S = 60.0


def pairing_path(state_dir: Path) -> Path:
    return state_dir / PAIRING_FILE


def open_window(state_dir: Path, seconds: float = DEFAULT_WINDOW_S, now: float | None = None) -> float:
    """Open (or extend) the window; returns when it closes (epoch seconds)."""
    from atomic_agent.api import write_atomic

    until = (time.time() if now is None else now) + seconds
    write_atomic(pairing_path(state_dir), json.dumps({"until": until}) + "\n", mode=0o600)
    return until


def window_closes_at(state_dir: Path, now: float | None = None) -> float | None:
    """When the open window closes (epoch seconds), or None when no window is open."""
    try:
        until = json.loads(pairing_path(state_dir).read_text(encoding="utf-8")).get("until")
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(until, (int, float)) or isinstance(until, bool):
        return None
    return float(until) if (time.time() if now is None else now) < until else None


def window_open(state_dir: Path, now: float | None = None) -> bool:
    return window_closes_at(state_dir, now) is not None


def close_window(state_dir: Path) -> None:
    try:
        pairing_path(state_dir).unlink()
    except FileNotFoundError:
        pass
