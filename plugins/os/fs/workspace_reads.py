"""The `file_reads` service (plugins/os/file_reads_contract.py): the read guard of the fs
tools plus workspace containment, for tools of other plugins that read a file by path.

Containment is decided on canonical paths (`realpath`, every symlink on the way resolved,
`is_within` by path components), and the guard then runs on the canonical path, which is
also what the caller opens, so the checked file and the read file are the same one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.plugins.os.fs.fs_env import FsEnv


@attrs.frozen
class WorkspaceReads:
    env: FsEnv

    async def admit_workspace_read(self, ctx: Any, raw: object, tool: str, what: str = "path") -> Path:
        from atomic_agent.plugins.os.fs.path_args import display_path, resolve_path
        from atomic_agent.plugins.os.fs.read_guard import ReadRefused, admit_read
        from atomic_agent.plugins.os.fs_approval.canonical_target import is_within
        from atomic_agent.plugins.os.fs_approval.trust_config_paths import trust_config_paths

        path = resolve_path(ctx, raw, what)
        shown = display_path(path, ctx)
        root = Path(os.path.realpath(ctx.working_dir))
        canonical = Path(os.path.realpath(path))
        if not is_within(canonical, root):
            if is_within(path, Path(os.path.abspath(ctx.working_dir))):
                raise ReadRefused(f"{what} {shown} is a symlink (or lies under one) that leads out of the workspace, "
                                  f"to {canonical}; {tool} reads files inside the working directory {root} only. "
                                  "Copy the file into the workspace and pass that path.")
            raise ReadRefused(f"{what} {shown} is outside the workspace {root}; {tool} reads files inside the "
                              "working directory only. Copy the file into the workspace and pass that path.")
        trust = (*trust_config_paths(ctx.state_dir), *self.env.extra_trust())
        await admit_read(ctx, canonical, shown, trust, tool)
        return canonical
