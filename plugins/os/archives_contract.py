"""The `archives` service: unpacking an archive with the os plugin's guards (zip-slip names,
link and device entries, declared size, inflation ratio, a byte budget enforced while
streaming; all or nothing), for plugins that install from archives (skills). See
plugins/metrics/metrics_contract.py for what a contract module may hold.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

ARCHIVES_SERVICE = "archives"


class CheckedArchives(Protocol):
    """What the `archives` service answers."""

    def extract(self, archive: Path, dest: Path, max_bytes: int) -> list[Path]:
        """Unpack `archive` (zip, tar, tar.gz/bz2/xz, gz) into `dest`, which must not exist yet;
        returns the files written. Raises ValueError saying what was refused (nothing is left
        behind) or OSError when the disk failed."""
