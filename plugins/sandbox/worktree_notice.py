"""What the person sees after a turn that changed the session's worktree: a compact diffstat
and the commands that show, apply or discard the edits (a `turn_notice`, never in the prompt).

`before_turn` remembers the worktree's content (its git tree id, or none yet); the notice at
the turn's end compares: a turn that changed nothing in the worktree shows nothing, even
when earlier turns left edits waiting. The diffstat is of everything waiting (what `apply`
would bring back), capped at STAT_FILES file lines.
"""

from __future__ import annotations

from pathlib import Path

STAT_FILES = 12
STAT_WIDTH = 80
NO_TREE = ""


class WorktreeNotices:
    """Per session: the worktree's content as the turn began; the notice as it ends."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self._at_start: dict[str, str] = {}

    def _tree(self, session_id: str) -> str:
        from .session_worktree import load_record, worktree_tree

        record = load_record(self.state_dir, session_id)
        if record is None or not Path(record.worktree).is_dir():
            return NO_TREE
        return worktree_tree(record)

    def turn_began(self, session_id: str) -> None:
        self._at_start[session_id] = self._tree(session_id)

    def turn_ended(self, session_id: str) -> list[str]:
        from .session_worktree import load_record, worktree_diff

        before = self._at_start.pop(session_id, NO_TREE)
        after = self._tree(session_id)
        if after == NO_TREE or after == before:
            return []
        record = load_record(self.state_dir, session_id)
        if record is None:
            return []
        stat = worktree_diff(record, stat=True, width=STAT_WIDTH).rstrip("\n").splitlines()
        if not stat:  # back to exactly where the worktree began: nothing waits
            return [f"worktree: this turn's edits undid the earlier ones; nothing waits to be applied "
                    f"(`atomic-agent sandbox discard {session_id}` removes the worktree)"]
        *files, total = stat
        shown = files[:STAT_FILES]
        if len(files) > STAT_FILES:
            shown.append(f" … and {len(files) - STAT_FILES} more file(s)")
        lines = [f"worktree: edits wait in session {session_id}'s git worktree, not yet in {record.workspace}:",
                 *shown, total,
                 f"see them: atomic-agent sandbox diff {session_id}",
                 f"bring them in: atomic-agent sandbox apply {session_id}  ·  drop them: atomic-agent sandbox "
                 f"discard {session_id}"]
        return ["\n".join(lines)]
