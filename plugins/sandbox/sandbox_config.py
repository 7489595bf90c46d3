"""The `sandbox` config block: whether `os.shell.run` runs inside bubblewrap, and worktree mode."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from atomic_agent.api import value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

SANDBOX_BLOCK = "sandbox"
MODES = ("off", "auto", "always")


@attrs.frozen
class SandboxConfig:
    """Sandboxed shell and worktree mode.

    `mode`: `off` runs `os.shell.run` as before; `auto` runs the ordinary shell commands the
    ladder would ask for (category `shell` at levels 1-3) inside bubblewrap without asking;
    `always` runs every `os.shell.run` call inside bubblewrap and fails the call, saying how
    to fix it, when bubblewrap cannot run. `bwrapPath` is the bubblewrap binary (a name found
    on PATH or a path). `worktree`: a session's os tools work in a git worktree of the
    workspace; `atomic-agent sandbox apply|discard SESSION` brings the edits back or drops them.
    """

    mode: str = value_field("off", env="ATOMIC_AGENT_SANDBOX_MODE", choices=MODES)
    bwrap_path: str = value_field("bwrap")
    worktree: bool = value_field(False)


def sandbox_config(runtime: RuntimeView) -> SandboxConfig:
    """The configured block, or defaults when it is not registered (a bare test runtime)."""
    try:
        block = runtime.config.block(SANDBOX_BLOCK)
    except (KeyError, AttributeError):
        return SandboxConfig()
    return block if isinstance(block, SandboxConfig) else SandboxConfig()
