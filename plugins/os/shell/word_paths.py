"""The files a shell word names on this machine, for rules about what a command reaches.

The word has had its quotes removed and its variables expanded already (`".e""nv"` is
`.env`). Here it is placed as the shell would: `~`/`~user` expanded, relative to the
effective cwd (a `cd` earlier in the line counts), then glob-expanded against the real
file system — with hidden names matched too, so `.en?`, `*.env` and `s*/o*` all reach the
files they could, a little wider than bash by default (dotglob may be on) — and each
match is realpath'd, so a symlink names what it leads to.
"""

from __future__ import annotations

import fnmatch
import os
import posixpath
import re

from .guard_paths import UNKNOWN, resolve_target

MAX_MATCHES = 64
_GLOB = re.compile(r"[*?\[]")


def _glob(pattern: str) -> list[str]:
    """Matches of an absolute glob, component by component (hidden names included)."""
    parts = pattern.strip("/").split("/")
    current = ["/"]
    for part in parts:
        nxt: list[str] = []
        if not _GLOB.search(part):
            nxt = [posixpath.join(c, part) for c in current]
        else:
            regex = re.compile(fnmatch.translate(part))
            for folder in current:
                try:
                    names = os.listdir(folder)
                except OSError:
                    continue
                nxt += [posixpath.join(folder, n) for n in names if regex.match(n)]
                if len(nxt) >= MAX_MATCHES:
                    break
        current = nxt[:MAX_MATCHES]
        if not current:
            return []
    return current


def word_paths(word: str, cwd: str, home: str) -> list[str] | None:
    """Absolute paths `word` may name, each as written and canonical; None when it hides
    something only known at run time (a substitution, `read`, an unknown cwd)."""
    path = resolve_target(word, cwd, home)
    if path == UNKNOWN:
        return None
    candidates = _glob(path) if _GLOB.search(path) else [path]
    found: dict[str, None] = {}
    for candidate in candidates:
        found[candidate] = None
        try:
            found[os.path.realpath(candidate)] = None
        except (OSError, ValueError):
            continue
    return list(found)


def looks_like_path(word: str) -> bool:
    """Whether a word is worth placing on disk (not an option, a URL or a plain number)."""
    if not word or word.startswith("-") or "://" in word:
        return False
    return not word.isdigit()
