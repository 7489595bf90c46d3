"""os.fs.trash: move a file or directory into the agent's trash, list it, or restore from it.

Moving in asks as `fs_trash` (or `other` outside workspace and home, `trust_config` for the
trust files or a directory holding them); restoring asks like a write to the original path.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.unstoppable_write import write_to_the_end
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import TRASH, TRASH_CATEGORY, WRITE

NAME = "os.fs.trash"
LIST_SHOWN = 50

SCHEMA = {
    "type": "object",
    "properties": {
        "action": {"enum": ["move", "list", "restore"], "description": "move (default), list, or restore."},
        "path": {"type": "string", "description": "What to move to the trash (action=move)."},
        "id": {"type": "string", "description": "Trash entry to restore (action=restore)."},
    },
    "additionalProperties": False,
}


def make_trash(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.trash_store import TrashError, TrashStore
        from atomic_agent.plugins.os.fs_approval.require_fs_approval import require_fs_approval

        store = TrashStore(env.state_dir_for(ctx))
        action = args.get("action") or "move"
        if action == "list":
            entries = store.entries()
            if not entries:
                return ToolResult.ok("the trash is empty", entries=[])
            lines = [f"{e['id']}  {e.get('kind', '?')}  {e.get('original')}" for e in entries[:LIST_SHOWN]]
            more = f"\n…and {len(entries) - LIST_SHOWN} more" if len(entries) > LIST_SHOWN else ""
            return ToolResult.ok(f"{len(entries)} trash entr{'y' if len(entries) == 1 else 'ies'}:\n"
                                 + "\n".join(lines) + more, entries=entries[:LIST_SHOWN])
        if action == "restore":
            try:
                meta = store.meta(str(args.get("id") or ""))
            except TrashError as exc:
                return ToolResult.error(str(exc))
            original = Path(meta["original"])
            approval = await require_fs_approval(ctx, WRITE, [original], tool=NAME, action="restore from trash to",
                                                 extra_trust=env.extra_trust())
            if not approval.approved:
                return ToolResult.error(approval.denied_result_text(NAME), denied=True, category=approval.category)
            try:
                await write_to_the_end(store.restore, meta["id"], approval.targets[0])
            except (TrashError, OSError) as exc:
                return ToolResult.error(f"not restored: {exc}")
            return ToolResult.ok(f"restored {display_path(original, ctx)} from trash {meta['id']}", id=meta["id"],
                                 path=str(original))
        try:
            path = resolve_path(ctx, args.get("path"))
        except PathArgError as exc:
            return ToolResult.error(str(exc))
        shown = display_path(path, ctx)
        if not path.exists() and not path.is_symlink():
            return ToolResult.error(f"no such file or directory: {shown}")
        approval = await require_fs_approval(ctx, TRASH, [path], tool=NAME, action="move to trash:",
                                             extra_trust=env.extra_trust())
        if not approval.approved:
            return ToolResult.error(approval.denied_result_text(NAME), denied=True, category=approval.category)
        # a symlink is trashed as the link itself, never the file it points at
        victim = path if path.is_symlink() else approval.targets[0]
        try:
            meta = await write_to_the_end(store.move_in, victim)
        except (TrashError, OSError) as exc:
            return ToolResult.error(f"{shown} not trashed: {exc}")
        return ToolResult.ok(f"moved {shown} to the trash (id {meta['id']}; restore with action=restore)",
                             id=meta["id"], original=meta["original"], category=approval.category)

    return ToolSpec(NAME, "Move a file/dir to the agent's trash (restorable), list the trash, or restore.", SCHEMA,
                    ResourceClass.APPROVAL_GATED, run, tier=Tier.RARE, approval_category=TRASH_CATEGORY,
                    example='{"tool": "os.fs.trash", "args": {"path": "old_build.log"}}')
