"""What a yes is bound to: the exact call it was asked for.

A binding records the tool, the canonical working dir, the argv (or the canonical targets
of a file write) and a SHA-256 of every file whose contents decide what runs (a script).
The gate re-captures the binding after the person said yes; when anything changed in
between (a script edited, a symlink swapped) the approval no longer applies and the
person is asked again.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence

import attrs

MISSING = "missing"
_CHUNK = 1 << 20


def _file_digest(path: str) -> str:
    try:
        with open(path, "rb") as handle:
            digest = hashlib.sha256()
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        return digest.hexdigest()
    except OSError:
        return MISSING


def _canonical(path: str | os.PathLike[str]) -> str:
    try:
        return os.path.realpath(os.fspath(path))
    except (OSError, ValueError):
        return os.fspath(path)


@attrs.frozen
class ApprovalBinding:
    tool: str
    cwd: str
    argv: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()  # (canonical path, sha256 or "missing")

    @classmethod
    def capture(cls, tool: str, cwd: str | os.PathLike[str], argv: Sequence[str] = (),
                files: Sequence[str | os.PathLike[str]] = ()) -> ApprovalBinding:
        paths = [_canonical(f) for f in files]
        return cls(tool, _canonical(cwd), tuple(str(a) for a in argv), tuple((p, _file_digest(p)) for p in paths))

    def recapture(self) -> ApprovalBinding:
        return ApprovalBinding.capture(self.tool, self.cwd, self.argv, [p for p, _ in self.files])

    @property
    def fingerprint(self) -> str:
        body = json.dumps([self.tool, self.cwd, list(self.argv), [list(f) for f in self.files]],
                          ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:16]

    def holds(self) -> bool:
        """True when the call would still run exactly what was approved."""
        return self.recapture().fingerprint == self.fingerprint

    def changed_files(self) -> list[str]:
        now = dict(self.recapture().files)
        return [path for path, digest in self.files if now.get(path) != digest]

