"""Compiled templates in the per-user cache, signed so a planted one is never loaded.

A compiled template is Python bytecode that runs at every render. Anyone who can write the
cache (a shell command, a malicious package) could otherwise replace it with code of their
choosing. So each entry is stored as `HMAC-SHA256(key, bytes) + bytes`, the key being 32
random bytes in `<cache>/template-key` (mode 0600, created on first use, one per user so
every state dir still shares the cache). An entry whose tag does not match — edited,
truncated, written by an older runtime or by someone without the key — is ignored, and the
template is compiled afresh and the entry rewritten. The tools treat the key file as one
of the runtime's secrets: they never read or write it.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path
from typing import Any

TEMPLATE_KEY_FILE = "template-key"
KEY_BYTES = 32
TAG_BYTES = hashlib.sha256().digest_size


def template_key(cache_dir: Path) -> bytes | None:
    """The signing key under `cache_dir`, created (0600) when missing; None when it cannot be
    read or made (the cache is then not used at all)."""
    path = cache_dir / TEMPLATE_KEY_FILE
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            try:
                cache_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            except FileExistsError:
                continue  # another process made it first: read theirs
            except OSError:
                return None
            key = secrets.token_bytes(KEY_BYTES)
            with os.fdopen(fd, "wb") as out:
                out.write(key)
            return key
        except OSError:
            return None
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            key = handle.read(KEY_BYTES + 1)
        # a key others may read or write, or of the wrong size, signs nothing
        if len(key) != KEY_BYTES or st.st_mode & 0o077 or st.st_uid != os.getuid():
            return None
        return key
    return None


def signed_bytecode_cache(folder: Path, key: bytes) -> Any:
    import jinja2

    class SignedBytecodeCache(jinja2.FileSystemBytecodeCache):
        """Loads an entry only when its tag verifies; a write that fails costs only the compile."""

        def load_bytecode(self, bucket: Any) -> None:
            try:
                with open(self._get_cache_filename(bucket), "rb") as handle:
                    blob = handle.read()
            except OSError:
                return
            tag, body = blob[:TAG_BYTES], blob[TAG_BYTES:]
            if len(tag) != TAG_BYTES or not hmac.compare_digest(tag, hmac.new(key, body, hashlib.sha256).digest()):
                return  # unsigned or tampered: compile again (and overwrite it)
            bucket.bytecode_from_string(body)

        def dump_bytecode(self, bucket: Any) -> None:
            import tempfile

            body = bucket.bytecode_to_string()
            name = self._get_cache_filename(bucket)
            try:  # a temp file renamed over the entry: a reader never sees half of one
                with tempfile.NamedTemporaryFile("wb", dir=os.path.dirname(name), prefix=os.path.basename(name),
                                                 suffix=".tmp", delete=False) as out:
                    out.write(hmac.new(key, body, hashlib.sha256).digest() + body)
                os.replace(out.name, name)
            except OSError:
                try:
                    os.remove(out.name)
                except (OSError, UnboundLocalError):
                    pass

    return SignedBytecodeCache(str(folder))
