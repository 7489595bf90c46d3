"""`trace replay`: rebuild the stable prefix from the current runtime and check a trace for drift.

A postmortem for dropped cache hits, not a simulator: it compares prompt prefixes only.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.tracing.prefix_drift import StepDrift, compare_prefix_hashes
from atomic_agent.tracing.prefix_hash import hash_prefix, read_salt, salt_path
from atomic_agent.tracing.trace_errors import ReplayUnavailableError
from atomic_agent.tracing.trace_reader import find_trace, read_trace

REBUILDER_MODULE = "atomic_agent.prompt.replay_prefix"
REBUILDER_NAME = "rebuild_stable_prefix"

PrefixRebuilder = Callable[[Path, str], str]


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


def load_prefix_rebuilder() -> PrefixRebuilder:
    """`rebuild_stable_prefix(state_dir, session_id) -> str`, looked up only when replay runs."""
    try:
        module = importlib.import_module(REBUILDER_MODULE)
    except ModuleNotFoundError as exc:
        # only a missing rebuilder module is "unavailable"; a broken import inside it propagates
        parents = {REBUILDER_MODULE.rsplit(".", n)[0] for n in range(REBUILDER_MODULE.count("."))}
        if exc.name not in parents:
            raise
        raise ReplayUnavailableError(
            f"trace replay needs the prompt builder's {REBUILDER_MODULE}.{REBUILDER_NAME}, which this "
            "installation does not have yet; `atomic-agent trace show` still works") from exc
    rebuild = getattr(module, REBUILDER_NAME, None)
    if not callable(rebuild):
        raise ReplayUnavailableError(f"{REBUILDER_MODULE} has no callable {REBUILDER_NAME}(state_dir, session_id)")
    return rebuild  # type: ignore[no-any-return]


def replay_prefix_drift(state_dir: Path, session_id: str, *, step: int | None = None, turn: int | None = None,
                        rebuild: PrefixRebuilder | None = None) -> ReplayReport:
    """Hash the current stable prefix with the state dir's salt and compare it with every recorded step."""
    path = find_trace(state_dir, session_id)
    resolved_id = path.stem
    salt = read_salt(state_dir)
    if salt is None:
        raise ReplayUnavailableError(
            f"there is no salt at {salt_path(state_dir)}, so the recorded hashes cannot be compared; "
            "replay a trace under the state dir that recorded it")
    prefix = (rebuild or load_prefix_rebuilder())(Path(state_dir), resolved_id)
    current = hash_prefix(prefix, salt)
    drifts = compare_prefix_hashes(read_trace(path).events, current, step=step, turn=turn)
    return ReplayReport(session_id=resolved_id, current_hash=current, steps=tuple(drifts))
