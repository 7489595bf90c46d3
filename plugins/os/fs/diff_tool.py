"""os.fs.diff: a unified diff of two files, or of a file against proposed contents."""

from __future__ import annotations

import asyncio
import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

NAME = "os.fs.diff"
MAX_FILE_BYTES = 5 * 1024 * 1024

SCHEMA = {
    "type": "object",
    "properties": {
        "a": {"type": "string", "description": "The original file."},
        "b": {"type": "string", "description": "The changed file (or give content)."},
        "content": {"type": "string", "description": "Proposed new contents of a, instead of b."},
        "context": {"type": "integer", "minimum": 0, "maximum": 50, "description": "Context lines (default 3)."},
    },
    "required": ["a"],
    "additionalProperties": False,
}


class DiffError(ValueError):
    pass


def load_text(path: Path, shown: str) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise DiffError(f"{shown} is over {MAX_FILE_BYTES // (1024 * 1024)} MiB; diff a smaller range")
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise DiffError(f"{shown} is binary; compare checksums with os.fs.hash instead")
    return raw.decode("utf-8", errors="replace")


def unified(old: str, new: str, old_name: str, new_name: str, context: int) -> str:
    lines = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                 fromfile=old_name, tofile=new_name, n=context)
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def make_diff(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        has_b, has_content = args.get("b") is not None, args.get("content") is not None
        if has_b == has_content:
            return ToolResult.error("give exactly one of b (a second file) or content (proposed text)")
        trust = (*trust_config_paths(ctx.state_dir), *env.extra_trust())
        try:
            a = resolve_path(ctx, args.get("a"), "a")
            shown_a = display_path(a, ctx)
            await admit_read(ctx, a, shown_a, trust, NAME)
            old = await asyncio.to_thread(load_text, a, shown_a)
            if has_b:
                b = resolve_path(ctx, args.get("b"), "b")
                shown_b = display_path(b, ctx)
                await admit_read(ctx, b, shown_b, trust, NAME)
                new = await asyncio.to_thread(load_text, b, shown_b)
            else:
                shown_b, new = f"{shown_a} (proposed)", str(args.get("content"))
        except (PathArgError, ReadRefused, DiffError) as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"cannot be read: {exc.strerror or exc}")
        text = unified(old, new, shown_a, shown_b, int(args.get("context", 3)))
        if not text:
            return ToolResult.ok(f"no differences between {shown_a} and {shown_b}", identical=True)
        added = sum(1 for line in text.splitlines() if line.startswith("+") and not line.startswith("+++"))
        removed = sum(1 for line in text.splitlines() if line.startswith("-") and not line.startswith("---"))
        return ToolResult.ok(f"+{added} -{removed}\n{text}", identical=False, added=added, removed=removed)

    return ToolSpec(NAME, "Unified diff of two files, or of a file against proposed contents.", SCHEMA,
                    ResourceClass.PURE_READ, run, durable=True, tier=Tier.RARE,
                    example='{"tool": "os.fs.diff", "args": {"a": "old.txt", "b": "new.txt"}}')
