"""os.fs.list: a compact listing of a directory, optionally a few levels deep.

One line per entry, directories first, sizes in short units, symlinks with their target;
dependency caches and hidden entries are listed but not descended into.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

NAME = "os.fs.list"
DEFAULT_LIMIT = 200

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "Directory to list (default: the session cwd)."},
        "depth": {"type": "integer", "minimum": 1, "maximum": 4, "description": "Levels to show (default 1)."},
        "hidden": {"type": "boolean", "description": "Include dot-files (default false)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 2000,
                  "description": f"Most entries to show (default {DEFAULT_LIMIT})."},
    },
    "additionalProperties": False,
}


def short_size(size: int) -> str:
    value = float(size)
    for unit in ("B", "K", "M", "G"):
        if value < 1024 or unit == "G":
            return f"{int(value)}{unit}" if unit == "B" else f"{value:.1f}{unit}"
        value /= 1024
    return f"{size}B"


def _entries(directory: Path, hidden: bool) -> list[os.DirEntry[str]]:
    with os.scandir(directory) as it:
        found = [e for e in it if hidden or not e.name.startswith(".")]

    def key(entry: os.DirEntry[str]) -> tuple[int, str]:
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            is_dir = False
        return (0 if is_dir else 1, entry.name.lower())

    return sorted(found, key=key)


def list_tree(root: Path, depth: int, hidden: bool, limit: int, withheld: Sequence[str] = ()) -> dict[str, Any]:
    """`withheld`: runtime secret roots (canonical) whose contents are never listed."""
    from atomic_agent.plugins.os.fs.walk_files import DEPENDENCY_DIRS
    from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_root_of

    lines: list[str] = []
    counts = {"dirs": 0, "files": 0}
    truncated = False

    def visit(directory: Path, level: int) -> None:
        nonlocal truncated
        try:
            entries = _entries(directory, hidden)
        except OSError as exc:
            lines.append("  " * level + f"(unreadable: {exc.strerror or exc})")
            return
        for entry in entries:
            if len(lines) >= limit:
                truncated = True
                return
            pad = "  " * level
            if entry.is_symlink():
                try:
                    target = os.readlink(entry.path)
                except OSError:
                    target = "?"
                lines.append(f"{pad}{entry.name} -> {target}")
                counts["files"] += 1
                continue
            if entry.is_dir(follow_symlinks=False):
                counts["dirs"] += 1
                if withheld and secret_root_of(os.path.realpath(entry.path), withheld) is not None:
                    lines.append(f"{pad}{entry.name}/ (withheld: the runtime's secrets)")
                    continue
                skip = entry.name in DEPENDENCY_DIRS or entry.name.startswith(".")
                lines.append(f"{pad}{entry.name}/" + (" (not expanded)" if skip and level + 1 < depth else ""))
                if level + 1 < depth and not skip:
                    visit(Path(entry.path), level + 1)
                continue
            counts["files"] += 1
            try:
                size = entry.stat(follow_symlinks=False).st_size
            except OSError:
                size = 0
            lines.append(f"{pad}{entry.name}  {short_size(size)}")

    visit(root, 0)
    return {"lines": lines, "truncated": truncated, **counts}


def make_list(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path

        try:
            root = resolve_path(ctx, args.get("path") or ".")
        except PathArgError as exc:
            return ToolResult.error(str(exc))
        shown = display_path(root, ctx)
        if not root.exists():
            return ToolResult.error(f"no such directory: {shown}")
        if not root.is_dir():
            return ToolResult.error(f"{shown} is a file, not a directory; use os.fs.read")
        from atomic_agent.plugins.os.fs_approval.runtime_secrets import (
            secret_root_of,
            secret_roots,
            state_dirs_of_trust,
        )
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        withheld = secret_roots(state_dirs_of_trust((*trust_config_paths(ctx.state_dir), *env.extra_trust())))
        if secret_root_of(os.path.realpath(root), withheld) is not None:
            return ToolResult.error(f"{shown} holds the runtime's secrets (API keys, operator token, approvals or "
                                    "leases); its contents are never listed by tools")
        got = await asyncio.to_thread(list_tree, root, int(args.get("depth") or 1), bool(args.get("hidden")),
                                      int(args.get("limit") or DEFAULT_LIMIT), withheld)
        head = f"{shown}/: {got['dirs']} dirs, {got['files']} files shown"
        if got["truncated"]:
            head += " (stopped at limit; list a subdirectory or raise limit)"
        if not got["lines"]:
            head = f"{shown}/: empty"
        return ToolResult.ok("\n".join([head, *got["lines"]]), path=str(root), truncated=got["truncated"],
                             dirs=got["dirs"], files=got["files"])

    return ToolSpec(NAME, "List a directory compactly (dirs first, sizes, symlink targets; depth up to 4).",
                    SCHEMA, ResourceClass.PURE_READ, run, durable=True, tier=Tier.FREQUENT,
                    example='{"tool": "os.fs.list", "args": {"path": "src", "depth": 2}}')
