"""os.fs.archive.list and os.fs.archive.read_entry: look inside zip / tar / gz without extracting."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv

LIST_NAME = "os.fs.archive.list"
READ_NAME = "os.fs.archive.read_entry"
DEFAULT_LIST = 200
DEFAULT_ENTRY_BYTES = 64 * 1024
MAX_ENTRY_BYTES = 4 * 1024 * 1024

LIST_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The archive (.zip, .tar, .tar.gz/.tgz, .gz)."},
        "limit": {"type": "integer", "minimum": 1, "maximum": 10000,
                  "description": f"Most entries to show (default {DEFAULT_LIST})."},
    },
    "required": ["path"],
    "additionalProperties": False,
}

READ_SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The archive."},
        "entry": {"type": "string", "description": "Entry name as os.fs.archive.list shows it."},
        "maxBytes": {"type": "integer", "minimum": 1, "maximum": MAX_ENTRY_BYTES,
                     "description": f"Bytes to read (default {DEFAULT_ENTRY_BYTES})."},
    },
    "required": ["path", "entry"],
    "additionalProperties": False,
}


async def _archive(ctx: ToolContext, env: FsEnv, raw: object, tool: str) -> tuple[Path, str, str]:
    from atomic_agent.plugins.os.fs.archive_reader import archive_kind
    from atomic_agent.plugins.os.fs.path_args import display_path, resolve_path
    from atomic_agent.plugins.os.fs.read_guard import admit_read
    from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

    path = resolve_path(ctx, raw)
    shown = display_path(path, ctx)
    await admit_read(ctx, path, shown, (*trust_config_paths(ctx.state_dir), *env.extra_trust()), tool)
    return path, shown, archive_kind(path)


def read_prefix(path: Path, kind: str, entry: str, cap: int) -> tuple[bytes, bool]:
    from atomic_agent.plugins.os.fs.archive_reader import open_member

    with open_member(path, kind, entry) as stream:
        data = stream.read(cap + 1)  # one byte more tells whether there is more
    return data[:cap], len(data) > cap


def make_archive_list(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.archive_guards import member_problem
        from atomic_agent.plugins.os.fs.archive_reader import ArchiveError, list_members
        from atomic_agent.plugins.os.fs.list_tool import short_size
        from atomic_agent.plugins.os.fs.path_args import PathArgError
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused

        try:
            path, shown, kind = await _archive(ctx, env, args.get("path"), LIST_NAME)
            members = await asyncio.to_thread(list_members, path, kind)
        except (PathArgError, ReadRefused, ArchiveError) as exc:
            return ToolResult.error(str(exc))
        limit = int(args.get("limit") or DEFAULT_LIST)
        total = sum(m.size or 0 for m in members)
        lines = []
        for m in members[:limit]:
            size = "?" if m.size is None else short_size(m.size)
            flag = f"  [{m.kind}{' -> ' + m.link if m.link else ''}]" if m.kind not in ("file", "dir") else ""
            unsafe = "  (unsafe: not extractable)" if m.kind in ("file", "dir") and member_problem(m) else ""
            lines.append(f"{size:>8}  {m.name}{flag}{unsafe}")
        head = f"{shown}: {kind}, {len(members)} entries, {short_size(total)} unpacked"
        if len(members) > limit:
            head += f" (first {limit} shown)"
        return ToolResult.ok("\n".join([head, *lines]), kind=kind, count=len(members), totalBytes=total,
                             entries=[{"name": m.name, "size": m.size, "kind": m.kind} for m in members[:limit]])

    return ToolSpec(LIST_NAME, "List the entries of a zip/tar/tar.gz/gz archive (names, sizes, link entries).",
                    LIST_SCHEMA, ResourceClass.PURE_READ, run, durable=True, tier=Tier.RARE,
                    example='{"tool": "os.fs.archive.list", "args": {"path": "release.zip"}}')


def make_archive_read_entry(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.archive_reader import ArchiveError
        from atomic_agent.plugins.os.fs.path_args import PathArgError
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused
        from atomic_agent.plugins.os.fs.text_sniff import binary_kind, looks_binary

        entry = str(args.get("entry") or "")
        cap = int(args.get("maxBytes") or DEFAULT_ENTRY_BYTES)
        try:
            path, shown, kind = await _archive(ctx, env, args.get("path"), READ_NAME)
            data, more = await asyncio.to_thread(read_prefix, path, kind, entry, cap)
        except (PathArgError, ReadRefused, ArchiveError) as exc:
            return ToolResult.error(str(exc))
        if looks_binary(data):
            return ToolResult.ok(f"{shown}!{entry}: binary ({binary_kind(data)}); not shown as text", binary=True)
        text = data.decode("utf-8", errors="replace")
        head = f"{shown}!{entry}" + (f" (first {cap} bytes; raise maxBytes for more)" if more else "")
        return ToolResult.ok(f"{head}\n{text}", truncated=more, bytes=len(data))

    return ToolSpec(READ_NAME, "Read one archive entry as text without extracting (size-capped).", READ_SCHEMA,
                    ResourceClass.PURE_READ, run, durable=True, tier=Tier.RARE,
                    example='{"tool": "os.fs.archive.read_entry", "args": {"path": "src.tar.gz", '
                            '"entry": "src/README.md"}}')
