"""Validate the arguments the git tools pass on to git.

A revision or path that starts with `-` would be read as an option (`--output=FILE`
writes a file), so revisions are refused when they look like one and paths always go
after `--`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_REV = re.compile(r"^[^\s\x00-\x1f~^:?*\[\\-][^\s\x00-\x1f]*$")


class GitArgsError(ValueError):
    pass


def repo_dir(args: Mapping[str, Any], working_dir: Path) -> Path:
    raw = args.get("path")
    if raw is None:
        return Path(working_dir)
    if not isinstance(raw, str) or not raw:
        raise GitArgsError("path must be a directory path string")
    target = Path(os.path.expanduser(raw))
    target = target if target.is_absolute() else Path(working_dir) / target
    if not target.is_dir():
        raise GitArgsError(f"path {raw!r} is not a directory (resolved to {target})")
    return target


def revision(args: Mapping[str, Any], key: str = "ref", default: str | None = None) -> str | None:
    value = args.get(key, default)
    if value is None:
        return None
    if not isinstance(value, str) or not _REV.match(value):
        raise GitArgsError(f"{key} {value!r} is not a revision (e.g. HEAD, main, HEAD~3, a1b2c3d, main..feature); "
                           "it may not start with '-' or contain spaces")
    return value


def file_arg(args: Mapping[str, Any], key: str = "file", required: bool = False) -> str | None:
    value = args.get(key)
    if value is None:
        if required:
            raise GitArgsError(f"{key} is required: the path of a file in the repository")
        return None
    if not isinstance(value, str) or not value or "\x00" in value:
        raise GitArgsError(f"{key} must be a file path string")
    return value


def bounded_int(args: Mapping[str, Any], key: str, default: int, lo: int, hi: int) -> int:
    value = args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise GitArgsError(f"{key} must be an integer in {lo}..{hi}, got {value!r}")
    return value
