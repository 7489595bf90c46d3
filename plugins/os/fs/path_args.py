"""Turn a path argument into an absolute path: `~` expanded, relative to the session cwd."""

from __future__ import annotations

import os
from pathlib import Path

from atomic_agent.api import ToolContext

MAX_PATH_CHARS = 4096


class PathArgError(ValueError):
    """A path argument that cannot name a file; the message says how to fix it."""


def resolve_path(ctx: ToolContext, raw: object, what: str = "path") -> Path:
    if not isinstance(raw, str) or not raw.strip():
        raise PathArgError(f"{what} must be a non-empty string, e.g. \"src/main.py\"")
    if "\x00" in raw:
        raise PathArgError(f"{what} contains a NUL byte; pass the file name without it")
    if len(raw) > MAX_PATH_CHARS:
        raise PathArgError(f"{what} is {len(raw)} characters long; paths longer than {MAX_PATH_CHARS} cannot exist")
    expanded = os.path.expanduser(raw.strip())
    path = Path(expanded)
    if not path.is_absolute():
        path = Path(ctx.working_dir) / path
    return Path(os.path.abspath(path))  # lexical only: approval decisions use the canonical target


def display_path(path: Path, ctx: ToolContext) -> str:
    """`path` relative to the session cwd when it is inside it, else absolute."""
    try:
        return str(path.relative_to(ctx.working_dir)) or "."
    except ValueError:
        return str(path)
