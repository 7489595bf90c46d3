"""Well-known credential stores: reading them asks under `sensitive_read` below level 5.

A store is a file or directory under the home dir that holds keys, tokens, passwords or
session cookies (ssh and gpg keys, cloud CLIs, package registries, git credentials,
keyrings, browser profiles), or a system file of the same kind (`/etc/shadow`). A file is
in a store when its canonical path is under one — and, because a hard link has no path
of its own to give it away, when a file with more than one link shares its device and
inode with a file inside a store (an index of the stores' files, built when first needed
and refreshed after `INDEX_TTL_S`).
"""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HOME_STORES: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker/config.json", ".netrc", ".git-credentials",
    ".config/git/credentials", ".pgpass", ".my.cnf", ".npmrc", ".pypirc", ".yarnrc.yml", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".config/gh/hosts.yml", ".config/hub", ".vault-token",
    ".terraform.d/credentials.tfrc.json", ".boto", ".s3cfg", ".config/rclone/rclone.conf", ".password-store",
    ".local/share/keyrings", ".local/share/kwalletd", ".config/op", ".mozilla/firefox", ".thunderbird",
    "snap/firefox/common/.mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware",
    ".config/microsoft-edge", ".config/vivaldi", ".config/opera", "Library/Keychains", "Library/Cookies",
    "Library/Application Support/Google/Chrome", "Library/Application Support/Firefox",
    "Library/Application Support/BraveSoftware", "Library/Application Support/Microsoft Edge",
)
SYSTEM_STORES: tuple[str, ...] = ("/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers", "/root/.ssh",
                                  "/var/lib/sss/secrets")
INDEX_TTL_S = 60.0
INDEX_MAX_FILES = 20_000


def _home() -> Path:
    return Path(os.path.realpath(os.path.expanduser("~")))


_ROOTS: dict[Path, tuple[float, tuple[tuple[str, Path], ...]]] = {}


def store_roots(home: Path | None = None) -> tuple[tuple[str, Path], ...]:
    """(shown name, root) of every store, home ones first: each store's path as written and,
    when it is a symlink, where it leads (canonical roots are cached for INDEX_TTL_S)."""
    base = home if home is not None else _home()
    cached = _ROOTS.get(base)
    if cached is not None and time.monotonic() - cached[0] < INDEX_TTL_S:
        return cached[1]
    roots: dict[tuple[str, Path], None] = {}
    for shown, path in [*((f"~/{rel}", base / rel) for rel in HOME_STORES), *((p, Path(p)) for p in SYSTEM_STORES)]:
        roots[(shown, path)] = None
        roots[(shown, Path(os.path.realpath(path)))] = None
    found = tuple(roots)
    _ROOTS[base] = (time.monotonic(), found)
    return found


class _InodeIndex:
    """(st_dev, st_ino) -> store name of the regular files inside the stores."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._built_at = -INDEX_TTL_S
        self._home: Path | None = None
        self._inodes: dict[tuple[int, int], str] = {}

    def lookup(self, key: tuple[int, int], home: Path) -> str | None:
        with self._lock:
            if time.monotonic() - self._built_at >= INDEX_TTL_S or self._home != home:
                self._inodes = _walk_stores(home)
                self._built_at = time.monotonic()
                self._home = home
            return self._inodes.get(key)


def _walk_stores(home: Path) -> dict[tuple[int, int], str]:
    found: dict[tuple[int, int], str] = {}
    for shown, root in store_roots(home):
        for st in file_stats(root):
            if stat.S_ISREG(st.st_mode):
                found[(st.st_dev, st.st_ino)] = shown
            if len(found) >= INDEX_MAX_FILES:
                return found
    return found


def file_stats(root: str | Path) -> Iterator[os.stat_result]:
    """The stat of `root` when it is a file, else of every entry below it (links not followed);
    what cannot be read is passed over. Hard links are found by these (device, inode) pairs."""
    try:
        st = os.stat(root)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        yield st
        return
    for folder, _dirs, files in os.walk(root, onerror=lambda _exc: None):
        for name in files:
            try:
                yield os.stat(os.path.join(folder, name), follow_symlinks=False)
            except OSError:
                continue


_INDEX = _InodeIndex()


def credential_store_of(canonical: Path, st: os.stat_result | None = None, home: Path | None = None) -> str | None:
    """The store `canonical` belongs to (e.g. "~/.ssh"), or None.

    With `st` (the file's stat) a file with more than one hard link is also matched by
    device and inode against the stores' files."""
    base = home if home is not None else _home()
    text = str(canonical)
    for shown, root in store_roots(base):
        prefix = str(root)
        if text == prefix or text.startswith(prefix.rstrip("/") + "/"):  # canonical paths: a prefix test is exact
            return shown
    if st is not None and st.st_nlink > 1 and stat.S_ISREG(st.st_mode):
        return _INDEX.lookup((st.st_dev, st.st_ino), base)
    return None


def reset_index() -> None:
    """Forget the inode index and the cached roots (tests that plant a store after a lookup)."""
    global _INDEX
    _INDEX = _InodeIndex()
    _ROOTS.clear()
