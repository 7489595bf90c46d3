"""The shell part of the `os` plugin: `os.shell.run`, its guard, and the process runner
the other os tools share. The `exec` config block lives here too."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from atomic_agent.api import ApprovalCategory, ConfigBlock, RuntimeView, ToolSpec


def tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from .shell_tool import shell_tool_spec

    return [shell_tool_spec(runtime)]


def config_blocks() -> list[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .exec_config import EXEC_BLOCK, ExecConfig

    return [ConfigBlock(key=EXEC_BLOCK, cls=ExecConfig)]


def approval_categories() -> list[ApprovalCategory]:
    from atomic_agent.api import ApprovalCategory

    from .shell_tool import DANGEROUS_CATEGORY, UNDECIDABLE_CATEGORY

    # commands the guard flags dangerous ask below level 5 (level 4 auto-runs only ordinary ones);
    # commands it cannot judge ask at every level; neither can be granted for a session
    return [ApprovalCategory(DANGEROUS_CATEGORY, 5, "shell command flagged dangerous", grantable=False),
            ApprovalCategory(UNDECIDABLE_CATEGORY, 5, "shell command the guard cannot judge", grantable=False,
                             always_asks=True)]
