"""`### worktree` in the variable tail: what the session's worktree changed so far, so the
reply can show the diff and say how to bring it back."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import PromptSection

DIFF_CHARS = 4000
HEADING = "worktree"


def worktree_sections(state_dir: Path, session_id: str) -> list[PromptSection]:
    from .session_worktree import WorktreeError, load_record, worktree_diff

    try:
        record = load_record(state_dir, session_id)
        if record is None or not Path(record.worktree).is_dir():
            return []
        diff = worktree_diff(record)
    except WorktreeError:
        return []
    if not diff.strip():
        return []
    shown = diff if len(diff) <= DIFF_CHARS else diff[:DIFF_CHARS] + f"\n[truncated {len(diff) - DIFF_CHARS} chars]"
    body = (f"Your edits went to a git worktree, not to {record.workspace}. Show this diff in your reply; the person "
            f"runs `atomic-agent sandbox apply {session_id}` to bring it back or `atomic-agent sandbox discard "
            f"{session_id}` to drop it.\n```diff\n{shown}\n```")
    return [PromptSection(HEADING, body, slot="loaded", source="the session's worktree")]
