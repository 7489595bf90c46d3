"""Which llama-server slot a completion may pin, agreed between every process on the machine.

CLI runs, serve, the sidecar, Telegram, scheduled tasks and memory sub-calls all talk to the
one local server, and each process has its own `SlotManager`: left alone, two processes both
pin slot 0 and evict each other's KV cache on every step. So a completion that names a slot
first takes that slot's lease: an exclusive `flock` on `slot-<n>.lock` in a folder per server
URL (under the per-user cache, else the state dir). The lease is held for the length of the
completion only, because that is when the server works in the slot; it is released when the
completion ends, and the kernel drops it when a process dies, so a crash leaves nothing to
recover (a lock file left behind is just an unlocked file).

`flock` locks belong to the open file, not the process: two sessions of one process that
want the same slot exclude each other exactly as two processes do.

A slot another completion holds is never pinned. The wanted slot is tried first (its cached
prefix is the session's), then any other free slot, except for the reserved background slot,
which never spills onto a session's slot. When every candidate is held, the request waits
(bounded, with a notice naming the holders) and then goes out with `id_slot = -1`: the server
then runs it in a slot that is idle, or queues it, and never interrupts a slot at work. A
background request that waited out pins the reserved slot unleased instead (`-1` could put it
in an idle session slot and evict that session's cached prefix); the server queues it there.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import hashlib
import logging
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

ANY_SLOT = -1
LEASES_FOLDER = "slot-leases"
POLL_S = 0.05
DEFAULT_WAIT_S = 10.0

_log = logging.getLogger("atomic_agent.llama_server.slots")


def _default_notice(message: str) -> None:
    _log.warning("atomic-agent: %s", message)


def lease_folder(base: Path, server_url: str) -> Path:
    """`<base>/slot-leases/<16 hex of the URL>`: one folder per server, whatever state dir asks."""
    key = hashlib.sha256(server_url.rstrip("/").encode("utf-8")).hexdigest()[:16]
    return base / LEASES_FOLDER / key


@attrs.define
class SlotLease:
    """One held slot (`slot` >= 0, `fd` open and locked) or the server's choice (`slot` -1)."""

    slot: int
    fd: int | None = None
    waited_s: float = 0.0

    def release(self) -> None:
        fd, self.fd = self.fd, None
        if fd is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


class SlotLeases:
    """The leases of one server's slots, for one process.

    `bases` are the folders tried in order for the lease files (the per-user cache, then the
    state dir); when none can hold them, leasing is off for this process, which is said once,
    and every request lets the server choose its slot rather than pin one blindly.
    """

    def __init__(self, server_url: str, bases: Sequence[Path], *, wait_s: float = DEFAULT_WAIT_S,
                 notice: Callable[[str], None] | None = None) -> None:
        self.server_url = server_url.rstrip("/")
        self.bases = tuple(bases)
        self.wait_s = wait_s
        self._notice = notice or _default_notice
        self._folder: Path | None = None
        self._unusable: str | None = None
        # wanted slot -> the slot this process was given instead last time: a process pushed off
        # its slot by another keeps to the one it moved to, rather than the two trading places
        self._moved: dict[int, int] = {}

    @property
    def folder(self) -> Path | None:
        """Where the lease files live; None when no base folder can hold them."""
        if self._folder is None and self._unusable is None:
            problems = []
            for base in self.bases:
                folder = lease_folder(base, self.server_url)
                try:
                    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
                    probe = self._open(folder, 0)
                    os.close(probe)
                except OSError as exc:
                    problems.append(f"{folder}: {exc.strerror or exc}")
                    continue
                self._folder = folder
                try:
                    (folder / "server.txt").write_text(self.server_url + "\n", encoding="utf-8")
                except OSError:
                    pass  # only a label for people looking at the folder
                break
            else:
                self._unusable = "; ".join(problems) or "no folder was given"
                self._notice(f"cannot keep llama-server slot leases ({self._unusable}), so this process lets "
                             f"the server at {self.server_url} pick a slot for every request (other processes' "
                             "caches may be evicted). Make the per-user cache (ATOMIC_AGENT_CACHE_DIR) or the "
                             "state dir writable.")
        return self._folder

    @staticmethod
    def _open(folder: Path, slot: int) -> int:
        path = folder / f"slot-{slot}.lock"
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except PermissionError:
            # an existing lock file we may not write (another user's, a read-only folder):
            # flock works on a read-only descriptor too
            return os.open(path, os.O_RDONLY | os.O_CLOEXEC)

    def try_take(self, slot: int, *, record: bool = True) -> SlotLease | None:
        """The lease of `slot` if nobody holds it now, else None (never waits). `record` writes
        this pid into the file, for the notices of processes that have to wait."""
        folder = self.folder
        if folder is None:
            return None
        fd = self._open(folder, slot)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return None
            raise
        if record:
            try:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
            except OSError:
                pass  # a read-only descriptor: the lease holds all the same
        return SlotLease(slot, fd)

    def holder(self, slot: int) -> int | None:
        """The pid last recorded as holding `slot`, if the lease is held right now."""
        folder = self.folder
        if folder is None:
            return None
        if self._free(slot):
            return None
        try:
            text = (folder / f"slot-{slot}.lock").read_text(encoding="utf-8").strip()
            return int(text) if text.isdigit() else None
        except OSError:
            return None

    def held(self, total_slots: int) -> dict[int, int | None]:
        """Every slot whose lease is held now, with its holder's pid when known (status, tests)."""
        return {slot: self.holder(slot) for slot in range(total_slots) if not self._free(slot)}

    def _free(self, slot: int) -> bool:
        probe = self.try_take(slot, record=False)
        if probe is None:
            return False
        probe.release()
        return True

    def candidates(self, wanted: int, total_slots: int, reserved: int) -> list[int]:
        """The slots to try for a request that wants `wanted`, best first."""
        if wanted == reserved:
            return [wanted]  # background work never spills onto a session's cached slot
        order = [wanted] + [s for s in range(total_slots) if s != wanted and s != reserved]
        if reserved >= 0:
            order.append(reserved)  # a free background slot beats waiting
        moved = self._moved.get(wanted)
        if moved is not None and moved in order:
            order.remove(moved)
            order.insert(0, moved)
        return order

    async def take(self, wanted: int, total_slots: int, reserved: int = ANY_SLOT) -> SlotLease:
        """A lease for the request that wants slot `wanted`; `SlotLease(-1)` when the request
        should let the server choose (it wanted none, leasing is off, or the wait ran out)."""
        if wanted < 0 or wanted >= total_slots or self.folder is None:
            return SlotLease(ANY_SLOT)
        order = self.candidates(wanted, total_slots, reserved)
        started = time.monotonic()
        told = False
        while True:
            for slot in order:
                lease = self.try_take(slot)
                if lease is not None:
                    if slot == wanted:
                        self._moved.pop(wanted, None)
                    else:
                        self._moved[wanted] = slot
                    lease.waited_s = time.monotonic() - started
                    return lease
            waited = time.monotonic() - started
            if waited >= self.wait_s and wanted == reserved:
                # the server's choice could be an idle session slot, whose cached prefix the
                # background call would evict: pin the reserved slot unleased instead, and the
                # server queues the call behind the one running there
                self._notice(f"the background llama-server slot {reserved} is still busy after {waited:.1f} s; "
                             "this background call waits in the server's queue for it")
                return SlotLease(reserved, waited_s=waited)
            if waited >= self.wait_s:
                self._notice(f"still no free llama-server slot after {waited:.1f} s; this request lets the "
                             "server choose (it runs in an idle slot, or waits in the server's queue)")
                return SlotLease(ANY_SLOT, waited_s=waited)
            if not told:
                told = True
                holders = sorted({pid for pid in (self.holder(s) for s in order) if pid})
                who = f" (pids {', '.join(map(str, holders))})" if holders else ""
                self._notice(f"every llama-server slot this request may use at {self.server_url} is busy with "
                             f"other completions{who}; waiting up to {self.wait_s:g} s for one "
                             "(more slots: llama.parallel)")
            await asyncio.sleep(POLL_S)


def slots_in_use(server_url: str, bases: Sequence[Path], total_slots: int) -> dict[int, int | None]:
    """Every slot of the server whose lease some process holds now, with its holder's pid when
    recorded — read-only (no folder or file is created), for `status`."""
    held: dict[int, int | None] = {}
    for base in bases:
        folder = lease_folder(base, server_url)
        for slot in range(total_slots):
            path = folder / f"slot-{slot}.lock"
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(fd, fcntl.LOCK_UN)
            except OSError as exc:
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    text = os.pread(fd, 32, 0).decode(errors="replace").strip()
                    held[slot] = int(text) if text.isdigit() else None
            finally:
                os.close(fd)
    return held
