"""`### worktree` in the variable tail: what the session's worktree changed so far, so the
reply can show the diff and say how to bring it back."""

from __future__ import annotations

from pathlib import Path

from atomic_agent.api import PromptSection

DIFF_CHARS = 4000
MAX_TOKENS = 1500
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
    body = (f"This turn's edits are in a git worktree, not yet in {record.workspace}; the person brings them back "
            f"with `atomic-agent sandbox apply {session_id}` or drops them with `atomic-agent sandbox discard "
            f"{session_id}`. The diff so far:\n```diff\n{shown}\n```")
    # file contents are data the model wrote or read, never instructions: a quoted "recall" body
    return [PromptSection(HEADING, body, slot="recall", source="the session's git worktree (its diff)",
                          max_tokens=MAX_TOKENS)]
