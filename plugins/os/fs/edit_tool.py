"""os.fs.edit: replace an exact string in a file, atomically.

The old string must occur exactly once (or `replaceAll`), so an edit never lands in the
wrong place. The approval is bound to the file's contents: if the file changes while the
person decides, they are asked again, and the replacement is applied to what is on disk
after the yes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.unstoppable_write import write_to_the_end
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import WORKSPACE_CATEGORY, WRITE

NAME = "os.fs.edit"
MAX_FILE_BYTES = 20 * 1024 * 1024

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "File to edit."},
        "old": {"type": "string", "minLength": 1, "description": "Exact text to replace (must be unique)."},
        "new": {"type": "string", "description": "Replacement text."},
        "replaceAll": {"type": "boolean", "description": "Replace every occurrence (default false)."},
    },
    "required": ["path", "old", "new"],
    "additionalProperties": False,
}


class EditError(ValueError):
    pass


def _load(path: Path, shown: str) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise EditError(f"{shown} is larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB; edit it with os.fs.patch")
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise EditError(f"{shown} is a binary file; it cannot be edited as text")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EditError(f"{shown} is not valid UTF-8 (byte {exc.start}); editing it as text could corrupt it") from None


def replaced(text: str, old: str, new: str, replace_all: bool, shown: str) -> tuple[str, int]:
    count = text.count(old)
    if count == 0:
        hint = " (the file uses CRLF line endings)" if "\r\n" in text and "\n" in old and "\r\n" not in old else ""
        raise EditError(f"the old string was not found in {shown}{hint}; os.fs.read the file and copy the text exactly")
    if count > 1 and not replace_all:
        raise EditError(f"the old string occurs {count} times in {shown}; add surrounding lines to make it unique, "
                        "or pass replaceAll=true")
    return text.replace(old, new) if replace_all else text.replace(old, new, 1), count


def make_edit(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.atomic_file_write import write_file_atomic
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.require_fs_approval import require_fs_approval
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            path = resolve_path(ctx, args.get("path"))
        except PathArgError as exc:
            return ToolResult.error(str(exc))
        shown = display_path(path, ctx)
        old, new = args.get("old"), args.get("new")
        if not isinstance(old, str) or not old or not isinstance(new, str):
            return ToolResult.error("old must be a non-empty string and new a string")
        replace_all = bool(args.get("replaceAll", False))
        trust = (*trust_config_paths(ctx.state_dir), *env.extra_trust())
        try:
            await admit_read(ctx, path, shown, trust, NAME)
            text = await asyncio.to_thread(_load, path, shown)
            replaced(text, old, new, replace_all, shown)  # fail before asking when it cannot apply
        except (ReadRefused, EditError) as exc:
            return ToolResult.error(str(exc))
        approval = await require_fs_approval(ctx, WRITE, [path], tool=NAME, action="edit file:", bind_contents=True,
                                             extra_trust=env.extra_trust())
        if not approval.approved:
            return ToolResult.error(approval.denied_result_text(NAME), denied=True, category=approval.category)
        target = approval.targets[0]
        try:
            text = await asyncio.to_thread(_load, target, shown)  # what is on disk now
            updated, count = replaced(text, old, new, replace_all, shown)
            await write_to_the_end(write_file_atomic, target, updated.encode("utf-8"), False)
        except EditError as exc:
            return ToolResult.error(str(exc))
        except OSError as exc:
            return ToolResult.error(f"{shown}: not edited ({exc.strerror or exc})")
        changed = count if replace_all else 1
        return ToolResult.ok(f"edited {shown}: {changed} replacement(s)", path=str(target), replacements=changed,
                             category=approval.category)

    return ToolSpec(NAME, "Replace an exact, unique string in a file (atomic; errors when missing or ambiguous).",
                    SCHEMA, ResourceClass.APPROVAL_GATED, run, tier=Tier.FREQUENT,
                    approval_category=WORKSPACE_CATEGORY,
                    example='{"tool": "os.fs.edit", "args": {"path": "app.py", "old": "DEBUG = True", '
                            '"new": "DEBUG = False"}}')
