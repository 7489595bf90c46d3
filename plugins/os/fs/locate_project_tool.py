"""os.fs.locate_project: turn a project name ("raylib") into its directory.

A pasted absolute or `~` path that is a directory is returned at once. Otherwise the name's
last segment is matched against the cwd chain, recent session dirs and the direct
children of `projects.roots`. One best match is an answer; a tie is surfaced as a list with
an instruction to ask the user; a miss says honestly how much was searched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

if TYPE_CHECKING:
    from atomic_agent.plugins.os.fs.locate_project_match import Match
    from atomic_agent.plugins.os.fs.locate_project_sources import RootScan

NAME = "os.fs.locate_project"
DEFAULT_LIMIT = 5

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1,
                 "description": "Just the project's folder name, e.g. \"raylib\" (not a sentence)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 20,
                  "description": f"Most candidates to list (default {DEFAULT_LIMIT})."},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def _roots(env: FsEnv) -> list[str]:
    block = env.config_block("projects")
    if block is not None:
        return list(block.roots)
    config = getattr(env.runtime, "config", None)
    raw = (getattr(config, "unknown_blocks", None) or {}).get("projects") if config is not None else None
    roots = raw.get("roots") if isinstance(raw, dict) else None
    return [r for r in roots if isinstance(r, str)] if isinstance(roots, list) else []


def _direct_path(name: str) -> Path | None:
    text = name.strip()
    if not (text.startswith("~") or os.path.isabs(text)):
        return None
    expanded = Path(os.path.expanduser(text))
    return Path(os.path.realpath(expanded)) if expanded.is_dir() else None


def _line(match: Match) -> str:
    from atomic_agent.plugins.os.fs.locate_project_match import TIER_NAMES

    return f"  {match.path}  ({match.source}, {TIER_NAMES[match.tier]})"


def _notes(scan: RootScan) -> list[str]:
    notes = [f"note: projects.roots entry {r!r} skipped (empty or not absolute)" for r in scan.invalid]
    notes += [f"note: root {r} could not be read" for r in scan.unreadable]
    notes += [f"note: root {r} has more folders than were scanned (first 500)" for r in scan.truncated]
    return notes


def make_locate_project(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.locate_project_match import TIER_NAMES, match_candidates, query_segment
        from atomic_agent.plugins.os.fs.locate_project_sources import (
            DIRECT,
            RootScan,
            cwd_chain,
            recent_session_dirs,
            root_children,
        )

        name = str(args.get("name") or "")
        limit = int(args.get("limit") or DEFAULT_LIMIT)
        direct = _direct_path(name)
        if direct is not None:
            return ToolResult.ok(f"found: {direct} ({DIRECT})", found=True, path=str(direct), source=DIRECT)
        query = query_segment(name)
        if not query:
            return ToolResult.error("name must contain a folder name, e.g. \"raylib\"")
        history = recent_session_dirs(env.service("sessions"))
        scan = RootScan()
        roots = await root_children(_roots(env), scan, ctx.cancelled)
        candidates = [*cwd_chain(ctx.working_dir), *history, *roots]
        matches = match_candidates(candidates, query)
        notes = _notes(scan)
        details = {"invalidRoots": scan.invalid, "unreadableRoots": scan.unreadable,
                   "truncatedRoots": scan.truncated, "candidates": [str(m.path) for m in matches[:limit]]}
        if not matches:
            text = (f"no folder matching {query!r} in the cwd chain, {len(history)} recent session dir(s) and "
                    f"{scan.scanned} configured root(s) scanned. Ask the user for the full path, or suggest adding "
                    "its parent directory to projects.roots.")
            return ToolResult.ok("\n".join([text, *notes]), found=False, **details)
        best = [m for m in matches if m.tier == matches[0].tier]
        if len(best) > 1:
            text = (f"ambiguous: {len(best)} folders match {query!r} equally well. Ask the user which one they "
                    "mean; do not guess.")
            return ToolResult.ok("\n".join([text, *(_line(m) for m in best[:limit]), *notes]), found=False,
                                 ambiguous=True, **details)
        chosen = best[0]
        others = [_line(m) for m in matches[1:limit]]
        text = f"found: {chosen.path} ({chosen.source}, {TIER_NAMES[chosen.tier]} match)"
        if others:
            text += "\nweaker matches:"
        return ToolResult.ok("\n".join([text, *others, *notes]), found=True, path=str(chosen.path),
                             source=chosen.source, **details)

    return ToolSpec(NAME, "Find a project's directory from its folder name (cwd, recent sessions, projects.roots).",
                    SCHEMA, ResourceClass.PURE_READ, run, durable=True, tier=Tier.FREQUENT,
                    example='{"tool": "os.fs.locate_project", "args": {"name": "raylib"}}')
