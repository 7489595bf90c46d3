"""os.fs.write: create or overwrite a text file, asked through the fs approval funnel."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.unstoppable_write import write_to_the_end
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import WORKSPACE_CATEGORY, WRITE

NAME = "os.fs.write"
MAX_CONTENT_CHARS = 10_000_000

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to write, relative to the session cwd or absolute."},
        "content": {"type": "string", "description": "The complete new contents (UTF-8)."},
        "createDirs": {"type": "boolean", "description": "Create missing parent directories (default true)."},
    },
    "required": ["path", "content"],
    "additionalProperties": False,
}


def make_write(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.atomic_file_write import write_file_atomic
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs_approval.require_fs_approval import require_fs_approval

        try:
            path = resolve_path(ctx, args.get("path"))
        except PathArgError as exc:
            return ToolResult.error(str(exc))
        content = args.get("content")
        if not isinstance(content, str):
            return ToolResult.error("content must be a string (the whole file)")
        if len(content) > MAX_CONTENT_CHARS:
            return ToolResult.error(f"content is {len(content)} characters; the limit is {MAX_CONTENT_CHARS}")
        data = content.encode("utf-8", errors="surrogateescape")
        verb = "overwrite" if path.exists() else "create"
        approval = await require_fs_approval(ctx, WRITE, [path], tool=NAME,
                                             action=f"{verb} file ({len(data)} bytes):", extra_trust=env.extra_trust())
        if not approval.approved:
            return ToolResult.error(approval.denied_result_text(NAME), denied=True, category=approval.category)
        target = approval.targets[0]
        try:
            created = await write_to_the_end(write_file_atomic, target, data, bool(args.get("createDirs", True)))
        except OSError as exc:
            return ToolResult.error(f"{display_path(path, ctx)}: not written ({exc.strerror or exc})")
        return ToolResult.ok(f"{'created' if created else 'wrote'} {display_path(path, ctx)} ({len(data)} bytes)",
                             path=str(target), bytes=len(data), created=created, category=approval.category)

    return ToolSpec(NAME, "Create or overwrite a file with the given contents (asks approval by where it lands).",
                    SCHEMA, ResourceClass.APPROVAL_GATED, run, tier=Tier.FREQUENT,
                    approval_category=WORKSPACE_CATEGORY,
                    example='{"tool": "os.fs.write", "args": {"path": "notes.txt", "content": "hello\\n"}}')
