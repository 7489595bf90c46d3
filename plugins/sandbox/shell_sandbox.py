"""The `sandbox` service: decides which shell calls are boxed, builds the box, and maps a
session to its worktree."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .bwrap_command import bwrap_argv
from .bwrap_probe import bwrap_problem, resolve_bwrap
from .sandbox_config import SandboxConfig, sandbox_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

SHELL_CATEGORY = "shell"  # the os plugin's ordinary-command category (level 4 on the ladder)
HIGHEST_ASKING_LEVEL = 3  # auto/always drop the ask only where the ladder would ask: levels 1-3


class BwrapSandbox:
    def __init__(self, runtime: RuntimeView, config: SandboxConfig | None = None) -> None:
        self.runtime = runtime
        self.config = config or sandbox_config(runtime)
        self._problem: tuple[str | None] | None = None  # the probe's answer, once per process
        self._probe_lock = asyncio.Lock()
        self._worktree_lock = threading.Lock()

    @property
    def mode(self) -> str:
        return self.config.mode

    @property
    def worktree(self) -> bool:
        return self.config.worktree

    def _level(self) -> int:
        gate = getattr(self.runtime, "gate", None)
        return int(getattr(gate, "level", 1)) if gate is not None else 1

    def _granted(self, session_id: str, category: str, command_shape: str | None) -> bool:
        grants = getattr(getattr(self.runtime, "gate", None), "grants", None)
        return grants is not None and grants.match(session_id, category, command_shape) is not None

    def boxes_instead_of_asking(self, session_id: str, category: str, command_shape: str | None) -> bool:
        if self.mode == "off" or category != SHELL_CATEGORY or self._level() > HIGHEST_ASKING_LEVEL:
            return False
        return not self._granted(session_id, category, command_shape)

    async def unavailable(self) -> str | None:
        async with self._probe_lock:
            if self._problem is None:
                problem = await bwrap_problem(self.config.bwrap_path)
                self._problem = (problem,)
                if problem is not None and self.mode == "auto":
                    print(f"atomic-agent: sandbox.mode auto: {problem}. Shell commands ask as with the sandbox "
                          "off.", file=sys.stderr)
            return self._problem[0]

    def boxed_argv(self, argv: Sequence[str], *, workspace: Path, cwd: Path, network: bool,
                   hidden: Sequence[str]) -> list[str]:
        binary = resolve_bwrap(self.config.bwrap_path) or self.config.bwrap_path
        return bwrap_argv(binary, argv, workspace=workspace, cwd=cwd, network=network,
                          state_dirs=[str(self.runtime.state_dir)], hidden=hidden)

    def working_dir(self, session_id: str, workspace: Path) -> Path:
        if not self.config.worktree:
            return workspace
        from .session_worktree import open_worktree

        with self._worktree_lock:  # the calls of one batch must not race to create it
            return open_worktree(Path(self.runtime.state_dir), session_id, workspace).working_dir
