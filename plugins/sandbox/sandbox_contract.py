"""The `sandbox` service other plugins call (the os plugin's shell tool and tool wrapper).

A name and a Protocol only: the os plugin imports this module, never the sandbox plugin's
implementation, and runs as before when no plugin provides the service.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

SANDBOX_SERVICE = "sandbox"


class ShellSandbox(Protocol):
    @property
    def mode(self) -> str:
        """`off`, `auto` or `always` (the `sandbox.mode` config)."""
        ...

    @property
    def worktree(self) -> bool:
        """Whether `sandbox.worktree` is on (the session's os tools work in its git worktree)."""
        ...

    def boxes_instead_of_asking(self, session_id: str, category: str, command_shape: str | None) -> bool:
        """Whether this call runs in the box without asking: mode auto or always, an ordinary
        `shell` call, a standing level of 3 or lower (where the ladder would ask) and no
        session grant that already covers it."""
        ...

    async def unavailable(self) -> str | None:
        """Why the box cannot run on this machine and how to fix it; None when it can."""
        ...

    def boxed_argv(self, argv: Sequence[str], *, workspace: Path, cwd: Path, network: bool,
                   hidden: Sequence[str]) -> list[str]:
        """`argv` wrapped in bubblewrap: the workspace read-write, the rest read-only, a private
        /tmp, no network unless `network`, and every path in `hidden` (plus the state dir)
        unreadable."""
        ...

    def working_dir(self, session_id: str, workspace: Path) -> Path:
        """Where the session's tools work: its git worktree when `sandbox.worktree` is on
        (created on first use), else `workspace`. Raises ValueError, saying what to do, when
        worktree mode cannot start (the workspace is not inside a git repository)."""
        ...
