"""Find, list and read the trace files under `<state>/traces/`."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import trace_files


class TraceNotFoundError(trace_files.TraceError):
    """No trace file for the session id asked for."""


HOW_TO_FIND_IDS = "run `atomic-agent trace list` to see the recorded session ids"


@attrs.frozen
class TraceFileInfo:
    """One trace file as `trace list` shows it."""

    session_id: str
    path: Path
    size_bytes: int
    modified_at: datetime
    event_count: int

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "path": str(self.path), "sizeBytes": self.size_bytes,
                "modifiedAt": self.modified_at.isoformat(timespec="seconds").replace("+00:00", "Z"),
                "eventCount": self.event_count}


@attrs.frozen
class TraceContents:
    """The events of a trace, in file order, and the line numbers (1-based) that did not parse."""

    events: list[dict[str, Any]]
    unreadable_lines: tuple[int, ...] = ()


def list_traces(state_dir: Path, limit: int | None = None) -> list[TraceFileInfo]:
    """Trace files newest first (by mtime, then name); at most `limit` of them."""
    if limit is not None and limit < 1:
        raise ValueError(f"limit must be at least 1, got {limit}")
    traces = trace_files.TraceFiles(state_dir)
    stats: list[tuple[Path, os.stat_result]] = []
    for path in traces.files():
        try:
            stats.append((path, path.stat()))
        except OSError:
            continue  # removed while listing
    stats.sort(key=lambda item: (item[1].st_mtime_ns, item[0].name), reverse=True)
    if limit is not None:
        stats = stats[:limit]
    return [TraceFileInfo(session_id=traces.session_id_of(path), path=path, size_bytes=st.st_size,
                          modified_at=datetime.fromtimestamp(st.st_mtime, timezone.utc),
                          event_count=count_events(path))
            for path, st in stats]


def count_events(path: Path) -> int:
    """Non-blank lines; a partial line being written right now counts too."""
    with path.open("rb") as handle:
        return sum(1 for line in handle if line.strip())


def find_trace(state_dir: Path, session_id: str) -> Path:
    """The trace file of `session_id`, or of the one session whose id starts with it."""
    traces = trace_files.TraceFiles(state_dir)
    exact = traces.path(session_id)  # refuses an id that cannot name a trace file
    if exact.is_file():
        return exact
    candidates = sorted(p for p in traces.files() if p.name.startswith(session_id) and p.is_file())
    if len(candidates) == 1:
        return candidates[0]
    if candidates:
        names = ", ".join(traces.session_id_of(p) for p in candidates[:10])
        raise TraceNotFoundError(f"session id {session_id!r} is ambiguous; it starts {names}. "
                                 "Give more of the id")
    raise TraceNotFoundError(f"no trace for session {session_id!r} in {traces.folder}; {HOW_TO_FIND_IDS}")


def read_trace(path: Path) -> TraceContents:
    """Parse every line; lines that are not JSON objects are skipped and reported by number.

    Safe while the session is still writing: a partial last line is left out silently.
    """
    events: list[dict[str, Any]] = []
    unreadable: list[int] = []
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw.decode("utf-8", errors="replace"))
            except ValueError:
                # an unterminated last line is the event being written right now, not damage
                if raw.endswith(b"\n"):
                    unreadable.append(number)
                continue
            if isinstance(event, dict):
                events.append(event)
            else:
                unreadable.append(number)
    return TraceContents(events=events, unreadable_lines=tuple(unreadable))

