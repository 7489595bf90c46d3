"""os.fs.archive.extract: unpack a checked archive into a directory, through the fs funnel.

Every entry is checked before anything is written (zip-slip names, absolute paths, link
and device entries, declared size and inflation ratio); the request asks as an
extraction (`fs_write_home` even inside the workspace; `other` outside home; `trust_config`
if any entry would land on a trust file); then members are staged and published all at once.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.archive_guards import DEFAULT_MAX_BYTES
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.unstoppable_write import write_to_the_end
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import EXTRACT, HOME_CATEGORY

NAME = "os.fs.archive.extract"
MAX_BYTES_LIMIT = 16 << 30
_SUFFIX = re.compile(r"(\.tar\.gz|\.tar\.bz2|\.tar\.xz|\.tgz|\.tbz2|\.txz|\.zip|\.tar|\.gz)$", re.IGNORECASE)

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The archive to unpack."},
        "dest": {"type": "string", "description": "Directory to unpack into (default: <cwd>/<archive name>)."},
        "overwrite": {"type": "boolean", "description": "Replace files that already exist (default false)."},
        "maxBytes": {"type": "integer", "minimum": 1, "maximum": MAX_BYTES_LIMIT,
                     "description": f"Cap on unpacked bytes (default {DEFAULT_MAX_BYTES})."},
    },
    "required": ["path"],
    "additionalProperties": False,
}


def default_dest(archive: Path, working_dir: Path) -> Path:
    stem = _SUFFIX.sub("", archive.name) or archive.name + ".d"
    return Path(working_dir) / stem


def make_archive_extract(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.archive_guards import UnsafeArchive, check_members
        from atomic_agent.plugins.os.fs.archive_reader import ArchiveError, archive_kind, list_members
        from atomic_agent.plugins.os.fs.extract_members import extract_members, member_target
        from atomic_agent.plugins.os.fs.list_tool import short_size
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.require_fs_approval import require_fs_approval
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            archive = resolve_path(ctx, args.get("path"))
            shown = display_path(archive, ctx)
            await admit_read(ctx, archive, shown, (*trust_config_paths(ctx.state_dir), *env.extra_trust()), NAME)
            dest = resolve_path(ctx, args["dest"], "dest") if args.get("dest") else default_dest(archive,
                                                                                                  ctx.working_dir)
            kind = archive_kind(archive)
            members = await asyncio.to_thread(list_members, archive, kind)
            cap = int(args.get("maxBytes") or DEFAULT_MAX_BYTES)
            check_members(members, cap)
            names = [m.name.rstrip("/") for m in members]
            if len(set(names)) != len(names):
                raise UnsafeArchive("refused, nothing extracted: the archive lists the same entry twice")
        except (PathArgError, ReadRefused, ArchiveError, UnsafeArchive) as exc:
            return ToolResult.error(str(exc))
        targets = [dest, *(member_target(dest, m.name) for m in members)]
        total = sum(m.size or 0 for m in members)
        approval = await require_fs_approval(
            ctx, EXTRACT, targets, tool=NAME, extra_trust=env.extra_trust(),
            action=f"extract {len(members)} entries ({short_size(total)}) from {shown} into")
        if not approval.approved:
            return ToolResult.error(approval.denied_result_text(NAME), denied=True, category=approval.category)
        try:
            written = await write_to_the_end(extract_members, archive, kind, members, approval.targets[0],
                                              bool(args.get("overwrite")), cap)
        except (ArchiveError, UnsafeArchive) as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"extraction failed and was rolled back: {exc.strerror or exc}")
        return ToolResult.ok(f"extracted {len(written)} file(s) from {shown} into {display_path(dest, ctx)}/",
                             dest=str(approval.targets[0]), files=len(written), category=approval.category)

    return ToolSpec(NAME, "Unpack a zip/tar/tar.gz/gz archive (zip-slip, link-entry and bomb guards; all or nothing).",
                    SCHEMA, ResourceClass.APPROVAL_GATED, run, tier=Tier.RARE, approval_category=HOME_CATEGORY,
                    example='{"tool": "os.fs.archive.extract", "args": {"path": "data.zip", "dest": "data"}}')
