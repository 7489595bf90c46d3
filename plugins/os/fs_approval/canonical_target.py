"""Where a write to a path actually lands.

For an existing path that is its realpath. For a path that does not exist yet it is the
realpath of the deepest existing ancestor plus the missing suffix — except that a dangling
symlink anywhere on the way (a leaf `leak.txt -> /outside/new.txt`, or a link to a missing
directory) is followed to its target, because open() would follow it and create the file
there. Link loops and over-long chains cannot be placed: the answer is None (the caller
treats that as "other", asking below level 5).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


def canonicalize_target(path: str | os.PathLike[str]) -> Path | None:
    """The canonical absolute path a mutation of `path` would touch, or None when unplaceable."""
    text = os.fspath(path)
    if "\x00" in text:
        return None
    try:
        return Path(os.path.realpath(text, strict=True))
    except FileNotFoundError:
        pass
    except NotADirectoryError:
        pass  # a file used as a directory: realpath the rest lexically below
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
    except (RecursionError, ValueError):
        return None
    try:
        # non-strict realpath follows every symlink it meets, dangling ones included, and
        # appends components that do not exist; it leaves a looping link unresolved
        resolved = os.path.realpath(text)
    except (OSError, RecursionError, ValueError):
        return None
    return None if _has_link(resolved) else Path(resolved)


def _has_link(resolved: str) -> bool:
    """True when an existing component of `resolved` is still a symlink (a loop was cut short)."""
    current = Path(resolved)
    for candidate in (current, *current.parents):
        try:
            mode = os.lstat(candidate).st_mode
        except OSError:
            continue
        if stat.S_ISLNK(mode):
            return True
    return False


def is_within(path: Path, root: Path) -> bool:
    """Containment on canonical paths (never lexical prefix matching: `ws2` is not in `ws`)."""
    try:
        return os.path.commonpath([str(path), str(root)]) == str(root)
    except ValueError:
        return False
