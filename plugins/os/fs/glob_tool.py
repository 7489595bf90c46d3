"""os.fs.glob: paths under a directory matching a glob (`**/*.py`, `src/*.{ts,tsx}`)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

NAME = "os.fs.glob"
DEFAULT_LIMIT = 200
VISIT_CAP = 200_000  # entries looked at before giving up, however few matched

SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {"type": "string", "description": "Glob relative to path, e.g. \"**/*.py\"."},
        "path": {"type": "string", "description": "Directory to search (default: the session cwd)."},
        "hidden": {"type": "boolean", "description": "Include dot-files and dot-dirs (default false)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 5000,
                  "description": f"Most paths to return (default {DEFAULT_LIMIT})."},
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


def glob_paths(root: Path, pattern: str, hidden: bool, limit: int, withheld: Sequence[str] = ()) -> dict[str, Any]:
    """`withheld`: runtime secret roots (canonical); nothing inside them is reported."""
    from atomic_agent.plugins.os.fs.glob_pattern import match_path
    from atomic_agent.plugins.os.fs.walk_files import walk
    from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_root_of

    real_root = os.path.realpath(root)
    # only a walk that can reach a secret pays for a realpath per match
    near = [r for r in withheld if r.startswith(real_root.rstrip("/") + "/") or secret_root_of(real_root, [r])]

    matches: list[str] = []
    visited = 0
    truncated = capped = False
    for entry in walk(root, hidden=hidden):
        visited += 1
        if visited > VISIT_CAP:
            capped = True
            break
        if match_path(entry.rel, pattern):
            if near and secret_root_of(os.path.realpath(os.path.join(root, entry.rel)), near) is not None:
                continue
            if len(matches) >= limit:
                truncated = True
                break
            matches.append(entry.rel + ("/" if entry.is_dir and not entry.is_link else ""))
    return {"matches": matches, "truncated": truncated, "capped": capped}


def check_pattern(pattern: object) -> str:
    from atomic_agent.plugins.os.fs.glob_pattern import GlobPatternError, compile_glob

    if not isinstance(pattern, str) or not pattern.strip():
        raise GlobPatternError("pattern must be a non-empty glob such as \"**/*.md\"")
    if pattern.startswith("/") or pattern.startswith("~"):
        raise GlobPatternError("pattern must be relative; put the directory in `path` instead")
    if ".." in pattern.split("/"):
        raise GlobPatternError("pattern may not contain `..`; put the directory in `path` instead")
    compile_glob(pattern)
    return pattern


def make_glob(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.glob_pattern import GlobPatternError
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path

        try:
            pattern = check_pattern(args.get("pattern"))
            root = resolve_path(ctx, args.get("path") or ".")
        except (GlobPatternError, PathArgError) as exc:
            return ToolResult.error(str(exc))
        shown = display_path(root, ctx)
        if not root.is_dir():
            return ToolResult.error(f"no such directory: {shown}")
        from atomic_agent.plugins.os.fs_approval.runtime_secrets import secret_roots, state_dirs_of_trust
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        withheld = secret_roots(state_dirs_of_trust((*trust_config_paths(ctx.state_dir), *env.extra_trust())))
        got = await asyncio.to_thread(glob_paths, root, pattern, bool(args.get("hidden")),
                                      int(args.get("limit") or DEFAULT_LIMIT), withheld)
        if not got["matches"]:
            head = f"no paths under {shown}/ match {pattern}"
        else:
            head = f"{len(got['matches'])} path(s) under {shown}/ match {pattern}"
        if got["truncated"]:
            head += " (stopped at limit)"
        if got["capped"]:
            head += f" (stopped after looking at {VISIT_CAP} entries; narrow path)"
        return ToolResult.ok("\n".join([head, *got["matches"]]), root=str(root), matches=got["matches"],
                             truncated=got["truncated"])

    return ToolSpec(NAME, "Find paths matching a glob (** spans directories; hidden and node_modules skipped).",
                    SCHEMA, ResourceClass.PURE_READ, run, durable=True, tier=Tier.FREQUENT,
                    example='{"tool": "os.fs.glob", "args": {"pattern": "**/*.py", "path": "src"}}')
