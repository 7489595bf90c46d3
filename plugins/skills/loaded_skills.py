"""Which skills each session has loaded with skill.view, most recent last (LRU, capped).

Kept per session in `<state>/skill-sessions/<session>.json` so a session continued by a
later `atomic-agent run` still has its skills under ### loaded-skills. Only names are
stored; the bodies are read from disk when the prompt is built, so a disabled or removed
skill drops out by itself.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from pathlib import Path

SESSIONS_DIR = "skill-sessions"
_SAFE_ID = re.compile(r"\A[A-Za-z0-9_.-]{1,128}\Z")


class LoadedSkills:
    def __init__(self, state_dir: Path, cap: int) -> None:
        self.dir = state_dir / SESSIONS_DIR
        self.cap = cap
        self._lock = threading.Lock()
        self._cache: dict[str, list[str]] = {}

    def _path(self, session_id: str) -> Path:
        stem = session_id if _SAFE_ID.match(session_id) and session_id not in (".", "..") else \
            hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()[:32]
        return self.dir / f"{stem}.json"

    def names(self, session_id: str) -> list[str]:
        with self._lock:
            if session_id not in self._cache:
                try:
                    data = json.loads(self._path(session_id).read_text(encoding="utf-8"))
                except (OSError, ValueError):
                    data = []
                self._cache[session_id] = [n for n in data if isinstance(n, str)][-self.cap:] \
                    if isinstance(data, list) else []
            return list(self._cache[session_id])

    def add(self, session_id: str, name: str) -> list[str]:
        """Load `name` (moved to the end if already loaded); returns the names evicted."""
        from atomic_agent.api import write_atomic

        current = [n for n in self.names(session_id) if n != name] + [name]
        evicted = current[:-self.cap] if len(current) > self.cap else []
        current = current[-self.cap:]
        with self._lock:
            self._cache[session_id] = current
            self.dir.mkdir(parents=True, exist_ok=True)
            write_atomic(self._path(session_id), json.dumps(current) + "\n")
        return evicted
