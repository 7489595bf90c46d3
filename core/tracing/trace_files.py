"""One state dir's traces as a reader sees them: the folder, one file per session, the salt
behind the recorded prefix hashes.

What a plugin that reads traces (`atomic-agent trace`, an exporter) needs, as one object so
the file layout and the hashing stay the core's (the recorder writes with the same rules),
and `TraceError`, the base of every trace problem it raises.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import attrs

from atomic_agent.tracing.prefix_hash import hash_prefix, read_salt, salt_path
from atomic_agent.tracing.trace_paths import TRACE_SUFFIX, trace_path, traces_dir, validate_session_id
from atomic_agent.tracing.trace_paths import TraceError as TraceError  # a reader catches it: one module to import


@attrs.frozen
class TraceFiles:
    state_dir: Path = attrs.field(converter=Path)

    @property
    def folder(self) -> Path:
        """`<state>/traces` (it may not exist yet)."""
        return traces_dir(self.state_dir)

    def path(self, session_id: str) -> Path:
        """The trace file of `session_id` (InvalidSessionIdError, a TraceError, for an id that cannot name one)."""
        return trace_path(self.state_dir, session_id)

    def files(self) -> Iterator[Path]:
        """Every trace file in the folder (none when it does not exist), in no particular order."""
        return self.folder.glob(f"*{TRACE_SUFFIX}") if self.folder.is_dir() else iter(())

    @staticmethod
    def session_id_of(path: Path) -> str:
        return path.name[: -len(TRACE_SUFFIX)]

    @staticmethod
    def check_session_id(session_id: str) -> str:
        """`session_id` unchanged, or InvalidSessionIdError saying what is wrong with it."""
        return validate_session_id(session_id)

    @property
    def salt_path(self) -> Path:
        return salt_path(self.state_dir)

    def salt(self) -> str | None:
        """The salt recorded hashes were made with; None when no run created one yet."""
        return read_salt(self.state_dir)

    @staticmethod
    def hash_prefix(prefix: str, salt: str) -> str:
        """The salted hash a `prompt_captured` event records for a stable prefix."""
        return hash_prefix(prefix, salt)
