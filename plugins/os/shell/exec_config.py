"""The `exec` config block: how tools start subprocesses (environment filter, limits)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import int_field, value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

EXEC_BLOCK = "exec"


@attrs.frozen
class ExecConfig:
    """Subprocesses started by the os tools (shell, git, ps, notify, clipboard).

    `filterEnvironment` (default on) gives children only a safe baseline — PATH, HOME,
    USER, LOGNAME, SHELL, LANG, LANGUAGE, LC_*, TERM, TMPDIR, TZ, XDG_* and the CA-bundle
    variables — plus the names in `allowedEnvironment` (exact names or `PREFIX_*`), so
    secrets loaded from `.env` do not reach every child. Env override:
    ATOMIC_AGENT_FILTER_SUBPROCESS_ENV=0 switches the filter off for one process.
    """

    filter_environment: bool = value_field(True, env="ATOMIC_AGENT_FILTER_SUBPROCESS_ENV")
    allowed_environment: tuple[str, ...] = value_field(())
    default_timeout_s: int = int_field(120, 1, 86_400)
    max_timeout_s: int = int_field(3600, 1, 86_400)
    # bytes of stdout kept from the start and from the end (stderr keeps half of each)
    output_head_bytes: int = int_field(32_768, 1024, 16 * 1024 * 1024)
    output_tail_bytes: int = int_field(32_768, 0, 16 * 1024 * 1024)
    max_args: int = int_field(4096, 1, 1_000_000)
    max_command_chars: int = int_field(131_072, 256, 2 * 1024 * 1024)
    max_stdin_bytes: int = int_field(4 * 1024 * 1024, 0, 1 << 30)


def exec_config(runtime: RuntimeView) -> ExecConfig:
    """The configured block, or defaults when the block is not registered (a bare test runtime)."""
    try:
        block = runtime.config.block(EXEC_BLOCK)
    except (KeyError, AttributeError):
        return ExecConfig()
    return block if isinstance(block, ExecConfig) else ExecConfig()


def tool_environment(config: ExecConfig, extra_allowed: tuple[str, ...] = (),
                     environ: Any = None) -> dict[str, str]:
    """The environment for a child: the filter as configured plus what the tool declares."""
    from atomic_agent.api import child_environment

    return child_environment((*config.allowed_environment, *extra_allowed), environ=environ,
                             enabled=config.filter_environment)
