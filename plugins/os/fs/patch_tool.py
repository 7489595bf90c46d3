"""os.fs.patch: apply a unified diff — a dry run by default, all or nothing when applied.

Every file's new contents are computed in memory first; if any hunk of any file fails,
nothing is written. When applying, the whole patch asks once (under its strictest
target's category), is recomputed from what is on disk after the yes, and a write that
fails half-way restores the files already written.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec
from atomic_agent.plugins.os.fs.fs_env import FsEnv
from atomic_agent.plugins.os.fs.unstoppable_write import write_to_the_end
from atomic_agent.plugins.os.fs_approval.classify_fs_mutation import WORKSPACE_CATEGORY, WRITE

if TYPE_CHECKING:
    from atomic_agent.plugins.os.fs.patch_parse import FilePatch

NAME = "os.fs.patch"
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_FILES = 200

SCHEMA = {
    "type": "object",
    "properties": {
        "patch": {"type": "string", "minLength": 1, "description": "Unified diff text (---/+++ headers, @@ hunks)."},
        "path": {"type": "string", "description": "Directory the patch paths are relative to (default: cwd)."},
        "dryRun": {"type": "boolean", "description": "Only check and report (default true)."},
        "strip": {"type": "integer", "minimum": 0, "maximum": 8,
                  "description": "Leading path components to drop (default: a/ b/ stripped automatically)."},
    },
    "required": ["patch"],
    "additionalProperties": False,
}


@attrs.frozen
class PlannedFile:
    path: Path
    shown: str
    old: str | None  # None when the patch creates the file
    new: str
    added: int
    removed: int


class PatchError(ValueError):
    pass


def _read_text(path: Path, shown: str) -> str:
    if path.stat().st_size > MAX_FILE_BYTES:
        raise PatchError(f"{shown}: larger than {MAX_FILE_BYTES // (1024 * 1024)} MiB")
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        raise PatchError(f"{shown}: binary file; a text patch cannot apply")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PatchError(f"{shown}: not valid UTF-8; a text patch could corrupt it") from None


def plan(files: Sequence[FilePatch], base: Path, ctx: ToolContext,
         targets: Sequence[Path] | None = None) -> tuple[list[PlannedFile], list[str]]:
    """New contents per file, or the reasons it cannot apply (never a partial plan)."""
    from atomic_agent.plugins.os.fs.patch_apply import HunkError, apply_hunks
    from atomic_agent.plugins.os.fs.path_args import display_path

    planned: list[PlannedFile] = []
    problems: list[str] = []
    for index, fp in enumerate(files):
        path = targets[index] if targets is not None else Path(os.path.abspath(base / fp.path))
        shown = display_path(path, ctx)
        try:
            if fp.deletes:
                raise PatchError(f"{shown}: the patch deletes the file; use os.fs.trash for that (restorable)")
            if fp.creates:
                if path.exists():
                    raise PatchError(f"{shown}: the patch creates it, but it already exists")
                old = None
                new = apply_hunks("", fp.hunks)
            else:
                if not path.is_file():
                    raise PatchError(f"{shown}: no such file to patch")
                old = _read_text(path, shown)
                new = apply_hunks(old, fp.hunks)
        except (PatchError, HunkError) as exc:
            problems.append(str(exc) if str(exc).startswith(shown) else f"{shown}: {exc}")
            continue
        except OSError as exc:
            problems.append(f"{shown}: {exc.strerror or exc}")
            continue
        added = sum(1 for h in fp.hunks for op, _ in h.lines if op == "+")
        removed = sum(1 for h in fp.hunks for op, _ in h.lines if op == "-")
        planned.append(PlannedFile(path, shown, old, new, added, removed))
    return planned, problems


def write_all(planned: Sequence[PlannedFile]) -> None:
    """Write every file; on a failure put back the ones already written, then re-raise."""
    from atomic_agent.plugins.os.fs.atomic_file_write import write_file_atomic

    done: list[PlannedFile] = []
    try:
        for item in planned:
            write_file_atomic(item.path, item.new.encode("utf-8"), create_dirs=True)
            done.append(item)
    except BaseException:
        for item in reversed(done):
            try:
                if item.old is None:
                    item.path.unlink()
                else:
                    write_file_atomic(item.path, item.old.encode("utf-8"), create_dirs=False)
            except OSError:
                pass
        raise


def _listing(planned: Sequence[PlannedFile]) -> str:
    return "\n".join(f"  {p.shown} (+{p.added} -{p.removed}{', new file' if p.old is None else ''})" for p in planned)


def make_patch(env: FsEnv) -> ToolSpec:
    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        from atomic_agent.plugins.os.fs.patch_parse import PatchParseError, parse_patch
        from atomic_agent.plugins.os.fs.path_args import PathArgError, display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.require_fs_approval import require_fs_approval
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        try:
            base = resolve_path(ctx, args.get("path") or ".")
            files = parse_patch(str(args.get("patch")), args.get("strip"))
        except (PathArgError, PatchParseError) as exc:
            return ToolResult.error(f"patch not applied: {exc}")
        if len(files) > MAX_FILES:
            return ToolResult.error(f"the patch touches {len(files)} files; at most {MAX_FILES} per call")
        trust = (*trust_config_paths(ctx.state_dir), *env.extra_trust())
        try:  # whether a hunk matches tells what a file holds: the read guard applies to every file patched
            for fp in files:
                existing = Path(os.path.abspath(base / fp.path))
                if not fp.creates and existing.is_file():
                    await admit_read(ctx, existing, display_path(existing, ctx), trust, NAME)
        except ReadRefused as exc:
            return ToolResult.error(f"patch not applied: {exc}")
        planned, problems = await asyncio.to_thread(plan, files, base, ctx)
        if problems:
            return ToolResult.error("patch does not apply; nothing was written:\n" + "\n".join(problems),
                                    problems=problems)
        if args.get("dryRun", True):
            return ToolResult.ok(f"dry run: the patch applies cleanly to {len(planned)} file(s)\n{_listing(planned)}\n"
                                 "call again with dryRun=false to write it", dryRun=True,
                                 files=[str(p.path) for p in planned])
        approval = await require_fs_approval(ctx, WRITE, [p.path for p in planned], tool=NAME,
                                             action=f"patch {len(planned)} file(s):", extra_trust=env.extra_trust(),
                                             bind_contents=True)
        if not approval.approved:
            return ToolResult.error(approval.denied_result_text(NAME), denied=True, category=approval.category)
        planned, problems = await asyncio.to_thread(plan, files, base, ctx, approval.targets)
        if problems:
            return ToolResult.error("the files changed after approval and the patch no longer applies; nothing "
                                    "was written:\n" + "\n".join(problems), problems=problems)
        try:
            await write_to_the_end(write_all, planned)
        except OSError as exc:
            return ToolResult.error(f"patch not applied ({exc.strerror or exc}); files already written were restored")
        return ToolResult.ok(f"patched {len(planned)} file(s)\n{_listing(planned)}", dryRun=False,
                             files=[str(p.path) for p in planned], category=approval.category)

    return ToolSpec(NAME, "Apply a unified diff: dry run by default, all-or-nothing when dryRun=false.", SCHEMA,
                    ResourceClass.APPROVAL_GATED, run, tier=Tier.RARE, approval_category=WORKSPACE_CATEGORY,
                    example='{"tool": "os.fs.patch", "args": {"patch": "--- a/x.txt\\n+++ b/x.txt\\n@@ -1 +1 @@\\n'
                            '-old\\n+new\\n", "dryRun": true}}')
