"""Tier (e): an apsw VFS whose disk forgets everything that was not fsync'd when the power goes.

Every file is opened through the real (default) VFS, so locking and the WAL index behave
as on a real machine; only durability is simulated. A write goes to a per-path volatile
overlay (the OS page cache) and reads see it; `xSync` moves the overlay onto the real file
(the platter). `power_cut()` drops every overlay — optionally keeping a random subset of
the unsynced writes, as a disk that wrote some dirty pages back on its own would — and
from then on every write, sync, truncate or delete through this VFS fails: a machine
without power does nothing more. The real file then holds exactly what was made durable.

A cut can be armed to fire at the N-th write/sync/truncate (`cut_at`), so a seeded run can
lose power in the middle of any transaction, including inside a COMMIT's own sync.

Not modelled: directory entries (a created or deleted file is durable at once) and torn
sectors inside one write (each `xWrite` is kept or dropped whole).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

import apsw
import attrs

_names = itertools.count()


class PowerCut(Exception):
    """The power went out during this I/O call; nothing after it reaches the disk."""


@attrs.define
class _Volatile:
    """What the page cache holds for one path beyond the platter: ops in issue order, and
    the image they make (platter + ops), built lazily for reads."""

    ops: list[tuple[str, int, bytes]] = attrs.field(factory=list)  # ("w", offset, data) | ("t", size, b"")
    image: bytearray | None = None


class PowerLossVFS(apsw.VFS):
    def __init__(self, sync_to_platter: bool = False) -> None:
        self.vfs_name = f"powerloss{next(_names)}"
        super().__init__(self.vfs_name, "")
        self.volatile: dict[str, _Volatile] = {}
        self.sync_to_platter = sync_to_platter  # also fsync the real file (only to measure; not needed)
        self.io_calls = 0  # writes + syncs + truncates issued so far
        self.syncs = 0
        self.cut_at: int | None = None
        self.keep = 0.0  # chance that an unsynced write reaches the platter anyway when the power goes
        self.rng: random.Random | None = None
        self.dead = False

    # -- the power switch -----------------------------------------------------------------
    def arm(self, cut_at: int, rng: random.Random, keep: float = 0.0) -> None:
        """Lose power at the `cut_at`-th mutating I/O call from now."""
        self.cut_at = self.io_calls + cut_at
        self.rng, self.keep = rng, keep

    def tick(self) -> None:
        """Count one mutating I/O call; lose power here if this is the armed one."""
        if self.dead:
            raise PowerCut("the machine is off")
        self.io_calls += 1
        if self.cut_at is not None and self.io_calls >= self.cut_at:
            self.power_cut()
            raise PowerCut(f"power lost at I/O call {self.io_calls}")

    def power_cut(self) -> None:
        """Lose every unsynced write, except that each is kept with probability `keep`
        (a disk may write dirty pages back in any order before the power fails)."""
        self.dead = True
        for path, vol in self.volatile.items():
            survivors = [op for op in vol.ops if self.rng is not None and self.rng.random() < self.keep]
            if survivors:
                _apply_to_platter(path, survivors)
        self.volatile.clear()

    def fsync(self, path: str) -> None:
        """An fsync of `path` made outside SQLite (the store's group commit syncs the WAL
        itself): its unsynced writes reach the platter, or the power goes first."""
        self.tick()
        self.syncs += 1
        vol = self.volatile.pop(path, None)
        if vol is not None and vol.ops:
            _apply_to_platter(path, vol.ops)

    # -- apsw.VFS ---------------------------------------------------------------------------
    def xOpen(self, name: Any, flags: list[int]) -> VolatileFile:
        path = name.filename() if hasattr(name, "filename") else name
        return VolatileFile(self, path, name, flags)

    def xDelete(self, filename: str, syncdir: bool) -> None:
        if self.dead:
            raise PowerCut("the machine is off")
        self.volatile.pop(filename, None)
        super().xDelete(filename, syncdir and self.sync_to_platter)  # directory entries are not modelled


def _apply_to_platter(path: str, ops: list[tuple[str, int, bytes]]) -> None:
    with open(path, "r+b") as f:
        for kind, where, data in ops:
            if kind == "w":
                f.seek(where)
                f.write(data)
            else:
                f.truncate(where)


class VolatileFile(apsw.VFSFile):
    def __init__(self, vfs: PowerLossVFS, path: str, name: Any, flags: list[int]) -> None:
        super().__init__("", name, flags)
        self.vfs = vfs
        self.path = path

    def _vol(self) -> _Volatile | None:
        return self.vfs.volatile.get(self.path) if self.path else None

    def _image(self, vol: _Volatile) -> bytearray:
        if vol.image is None:
            size = super().xFileSize()
            image = bytearray(super().xRead(size, 0) if size else b"")
            for kind, where, data in vol.ops:
                _apply(image, kind, where, data)
            vol.image = image
        return vol.image

    def _pend(self, kind: str, where: int, data: bytes) -> None:
        vol = self.vfs.volatile.setdefault(self.path, _Volatile())
        image = self._image(vol)
        vol.ops.append((kind, where, data))
        _apply(image, kind, where, data)

    def xRead(self, amount: int, offset: int) -> bytes:
        vol = self._vol()
        if vol is None:
            return super().xRead(amount, offset)
        return bytes(self._image(vol)[offset:offset + amount])  # short read: SQLite zero-fills

    def xWrite(self, data: Any, offset: int) -> None:
        self.vfs.tick()
        if not self.path:  # an anonymous temp file never outlives the process anyway
            super().xWrite(data, offset)
            return
        self._pend("w", offset, bytes(data))

    def xTruncate(self, newsize: int) -> None:
        self.vfs.tick()
        if not self.path:
            super().xTruncate(newsize)
            return
        self._pend("t", newsize, b"")

    def xFileSize(self) -> int:
        vol = self._vol()
        return super().xFileSize() if vol is None else len(self._image(vol))

    def xSync(self, flags: int) -> None:
        self.vfs.tick()
        self.vfs.syncs += 1
        vol = self.vfs.volatile.pop(self.path, None) if self.path else None
        if vol is not None and vol.ops:
            _apply_to_platter(self.path, vol.ops)
        if self.vfs.sync_to_platter:
            super().xSync(flags)


def _apply(image: bytearray, kind: str, where: int, data: bytes) -> None:
    if kind == "t":
        del image[where:]
        return
    if len(image) < where:
        image.extend(b"\0" * (where - len(image)))
    image[where:where + len(data)] = data


def uninstall(vfs: PowerLossVFS, close: Callable[[], Any] | None = None) -> None:
    """Unregister the VFS (after every connection using it is closed)."""
    if close is not None:
        close()
    vfs.unregister()
