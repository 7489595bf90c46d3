"""`trace replay`: rebuild the stable prefix from the current runtime and check a trace for drift.

A postmortem for dropped cache hits, not a simulator: it compares prompt prefixes only. The
prefix comes from the core's prompt builder (`trace_replay.rebuild_stable_prefix`: today's tools,
templates and config with the profile the trace recorded).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.api import trace_files

from .prefix_drift import StepDrift, compare_prefix_hashes
from .trace_reader import find_trace, read_trace

PrefixRebuilder = Callable[[Path, str], str]


class ReplayUnavailableError(trace_files.TraceError):
    """`trace replay` cannot rebuild or compare the stable prefix here."""


@attrs.frozen
class ReplayReport:
    session_id: str
    current_hash: str
    steps: tuple[StepDrift, ...]

    @property
    def drifted(self) -> bool:
        return any(s.drifted for s in self.steps)

    def to_json(self) -> dict[str, Any]:
        return {"sessionId": self.session_id, "currentHash": self.current_hash, "drifted": self.drifted,
                "steps": [s.to_json() for s in self.steps]}


def replay_prefix_drift(state_dir: Path, session_id: str, *, step: int | None = None, turn: int | None = None,
                        rebuild: PrefixRebuilder | None = None) -> ReplayReport:
    """Hash the current stable prefix with the state dir's salt and compare it with every recorded step."""
    path = find_trace(state_dir, session_id)
    resolved_id = path.stem
    traces = trace_files.TraceFiles(state_dir)
    salt = traces.salt()
    if salt is None:
        raise ReplayUnavailableError(
            f"there is no salt at {traces.salt_path}, so the recorded hashes cannot be compared; "
            "replay a trace under the state dir that recorded it")
    if rebuild is None:
        from atomic_agent.api import trace_replay

        rebuild = trace_replay.rebuild_stable_prefix  # looked up now: tests stand one in
    prefix = rebuild(Path(state_dir), resolved_id)
    current = traces.hash_prefix(prefix, salt)
    drifts = compare_prefix_hashes(read_trace(path).events, current, step=step, turn=turn)
    return ReplayReport(session_id=resolved_id, current_hash=current, steps=tuple(drifts))
