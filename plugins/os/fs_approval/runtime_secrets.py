"""What grants control of the runtime: never read, listed, searched or shown by any tool.

Inside a state dir:
- `.env`: API keys and bot tokens loaded at boot;
- `serve/`: the operator token (`X-Atomic-Operator` answers any approval over HTTP);
- `audit/`: the approval log (which commands the person approved, and how);
- `approvals.sqlite` (and its WAL files): the durable approvals and questions; writing it
  would answer the agent's own approvals;
- `turn-owners/`, `task-runners/`: the owner leases recovery trusts to tell live processes
  from dead ones;
- `telegram-pairing.json`: the window in which a DM claims the bot;
and in the per-user cache, `template-key`: the key that signs compiled templates.

A path is a runtime secret when its canonical path is one of these or inside one — and,
for a file with more than one hard link, when it shares its device and inode with one
(a link planted in the workspace is still the token).
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from atomic_agent.plugins.os.fs_approval.credential_stores import file_stats

SECRET_NAMES: tuple[str, ...] = (".env", "serve", "audit", "turn-owners", "task-runners", "telegram-pairing.json",
                                 # the core's approval records (approval_records.RECORDS_FILE) and its WAL files
                                 "approvals.sqlite", "approvals.sqlite-wal", "approvals.sqlite-shm")
TEMPLATE_KEY_FILE = "template-key"  # atomic_agent.api.TEMPLATE_KEY_FILE, kept here so a guard check imports nothing
# names specific enough to flag in code or an unresolved word (`serve` alone is too common a word)
SECRET_MARKERS: tuple[str, ...] = (".env", "operator-token", "approvals.ndjson", "approvals.sqlite", "telegram-pairing",
                                   TEMPLATE_KEY_FILE)
STATE_MARKERS = ("config.json", ".env")  # the trust files whose parent is a state dir


@functools.lru_cache(maxsize=64)
def _real(path: str) -> str:
    # a state dir does not move while the process runs; caching its realpath keeps the guard cheap
    return os.path.realpath(path)


def state_dirs_of_trust(trust: Iterable[Path]) -> tuple[Path, ...]:
    """The state dirs behind a tool's trust files (config.json / .env)."""
    seen: dict[str, Path] = {}
    for path in trust:
        if path.name in STATE_MARKERS:
            seen.setdefault(str(path.parent), path.parent)
    return tuple(seen.values())


def secret_roots(state_dirs: Iterable[Path | str]) -> tuple[str, ...]:
    """Every secret path of these state dirs and of the per-user cache, as written and
    canonical (strings, no duplicates)."""
    from atomic_agent.plugins.os.fs_approval.persistence_spots import cache_roots

    roots: dict[str, None] = {os.path.join(root, TEMPLATE_KEY_FILE): None for root in cache_roots()}
    for state_dir in state_dirs:
        base = os.path.abspath(os.fspath(state_dir))
        for name in SECRET_NAMES:
            roots[os.path.join(base, name)] = None
            roots[os.path.join(_real(base), name)] = None
    return tuple(roots)


def _under(text: str, root: str) -> bool:
    return text == root or text.startswith(root + "/")


def secret_root_of(canonical: Path | str, roots: Sequence[str]) -> str | None:
    """The secret root `canonical` is (or is inside), or None."""
    text = os.fspath(canonical)
    for root in roots:
        if _under(text, root):
            return root
    return None


def _secret_inodes(roots: Sequence[str]) -> set[tuple[int, int]]:
    return {(st.st_dev, st.st_ino) for root in roots for st in file_stats(root)}


def is_runtime_secret(canonical: Path | str, roots: Sequence[str], st: os.stat_result | None = None) -> bool:
    """Whether `canonical` is a runtime secret by path or, with its stat and more than one
    link, by inode (a hard link elsewhere)."""
    if secret_root_of(canonical, roots) is not None:
        return True
    if st is not None and st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
        return (st.st_dev, st.st_ino) in _secret_inodes(roots)
    return False
