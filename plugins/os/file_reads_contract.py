"""The os plugin's `file_reads` service: the fs tools' read guard for another plugin's tool
that reads a file the model names (vision.describe's images)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

FILE_READS_SERVICE = "file_reads"


class FileReads(Protocol):
    async def admit_workspace_read(self, ctx: Any, raw: object, tool: str, what: str = "path") -> Path:
        """The canonical path to open for `raw` (a path argument of `tool`, relative to the
        session's working dir), or ValueError with a message the model can act on.

        The fs tools' rules apply (one path-argument parser; anything but a regular file,
        the runtime's secrets and /proc environ/mem refused; a credential store asked under
        `sensitive_read`) and, on top, containment: the canonical path (symlinks resolved)
        must lie inside the canonical working dir, so a link planted in the workspace cannot
        reach a file outside it."""
