"""Salted hashes of the stable prompt prefix, and the per-state-dir salt behind them.

The salt keeps a trace from confirming a guessed prefix; it lives at `<state>/traces/.salt`
so every trace under one state dir is comparable with the current runtime's prefix.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

from atomic_agent.tracing.trace_paths import SaltFileError, traces_dir

SALT_FILE_NAME = ".salt"
_SALT = re.compile(r"^[0-9a-f]{32}$")


def hash_prefix(prefix: str, salt: str) -> str:
    """sha256 hex of `salt + prefix` (UTF-8; lone surrogates pass through, never raise)."""
    return hashlib.sha256((salt + prefix).encode("utf-8", errors="surrogatepass")).hexdigest()


def salt_path(state_dir: Path) -> Path:
    return traces_dir(state_dir) / SALT_FILE_NAME


def read_salt(state_dir: Path) -> str | None:
    """The state dir's salt, or None when none was created yet."""
    path = salt_path(state_dir)
    try:
        text = path.read_text(encoding="ascii", errors="replace").strip()
    except FileNotFoundError:
        return None
    if not _SALT.match(text):
        raise SaltFileError(f"{path} does not hold a 32-hex-digit salt. Delete it to start a new "
                            "salt; traces recorded before then will report drift in `trace replay`")
    return text


def load_or_create_salt(state_dir: Path) -> str:
    """The salt of `state_dir`, created (16 random bytes as hex, mode 0600) on first use."""
    existing = read_salt(state_dir)
    if existing is not None:
        return existing
    path = salt_path(state_dir)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # write a private temp file, then hard-link it into place: the link fails if another
    # process won the race, and a reader never sees a half-written salt
    tmp = path.with_name(f"{SALT_FILE_NAME}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(secrets.token_hex(16))
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
    salt = read_salt(state_dir)
    assert salt is not None
    return salt
