"""A test plugin whose memory phase shows the person a multi-line notice at the end of every
turn (the shape of the sandbox's worktree diffstat), and one whose notice raises."""

from __future__ import annotations

from collections.abc import Iterable

from atomic_agent.api import MemoryPhase, RuntimeView, hookimpl

NOTICE = ("worktree: edits wait in the session's git worktree:\n"
          " a.txt   | 2 +-\n new.txt | 1 +\n 2 files changed, 2 insertions(+), 1 deletion(-)\n"
          "see them: atomic-agent sandbox diff S")


class NoticePlugin:
    def __init__(self, text: str = NOTICE, fail: bool = False) -> None:
        self.text, self.fail, self.seen = text, fail, []  # type: ignore[var-annotated]

    @hookimpl
    def register_memory_phases(self, runtime: RuntimeView) -> Iterable[MemoryPhase]:
        def turn_notices(session_id: str, turn_index: int) -> list[str]:
            self.seen.append((session_id, turn_index))
            if self.fail:
                raise RuntimeError("notice broke")
            return [self.text, "  "]  # a blank notice is dropped

        return [MemoryPhase("t-notice", turn_notices=turn_notices)]
