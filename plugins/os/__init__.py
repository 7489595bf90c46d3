"""The `os` plugin: file-system, shell, git, HTTP, web, process and desktop tools.

Each sub-package exposes `tool_specs(runtime) -> list[ToolSpec]` and may expose
`config_blocks() -> list[ConfigBlock]` and `approval_categories() -> list[ApprovalCategory]`.
They are imported lazily, when the hook runs, and a sub-package that is missing (not built
yet) or fails to import is skipped with one warning line, so one broken area never takes
the other tools down.

`tool_specs` runs at every start-up to put the tools in the prompt, so a tool module keeps
only what its spec shows (name, summary, schema, example, category) at its top level; the
guards, runners and parsers behind it are imported inside the functions of the run path and
load on the tool's first call (tests/plugins/os/test_tool_specs_are_light.py).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import ApprovalCategory, ConfigBlock, RuntimeView, ServiceSpec, ToolSpec

    from .archives_contract import CheckedArchives

SUBPACKAGES = ("fs", "shell", "git", "http", "web", "proc", "desktop")


def _subpackages() -> Iterable[Any]:
    for name in SUBPACKAGES:
        module_name = f"{__name__}.{name}"
        try:
            yield importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:  # the package exists but one of its imports is missing
                _warn(name, exc)
        except Exception as exc:
            _warn(name, exc)


def _warn(name: str, exc: BaseException) -> None:
    print(f"atomic-agent: os plugin: skipped os.{name} tools ({type(exc).__name__}: {exc})", file=sys.stderr)


def _collect(attribute: str, *args: Any) -> list[Any]:
    records: list[Any] = []
    for module in _subpackages():
        provider = getattr(module, attribute, None)
        if provider is not None:
            records.extend(provider(*args))
    return records


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    return [_in_session_workspace(spec, runtime) for spec in _collect("tool_specs", runtime)]


def _in_session_workspace(spec: ToolSpec, runtime: RuntimeView) -> ToolSpec:
    """The tool run in the session's workspace as the `sandbox` service places it: its git
    worktree in `sandbox.worktree` mode (created on the first call), else unchanged."""
    import attrs

    inner = spec.run

    async def run(args: Any, ctx: Any) -> Any:
        from atomic_agent.api import ToolResult

        from .session_workspace import session_context

        placed = await session_context(runtime, ctx, spec.name)
        return placed if isinstance(placed, ToolResult) else await inner(args, placed)

    return attrs.evolve(spec, run=run)


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    return _collect("config_blocks")


@hookimpl
def register_approval_categories() -> Iterable[ApprovalCategory]:
    # the standard ten (fs_write_*, fs_trash, http, shell, proc_kill, trust_config, ...) are
    # the core's; a sub-package adds a category only when it needs a new one
    return _collect("approval_categories")


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    from .archives_contract import ARCHIVES_SERVICE
    from .file_reads_contract import FILE_READS_SERVICE
    from .fs_approval.sensitive_taint import TAINT

    def file_reads(runtime: RuntimeView) -> object:
        from .fs.fs_env import FsEnv
        from .fs.workspace_reads import WorkspaceReads

        return WorkspaceReads(FsEnv(runtime))

    # which credential stores each session's tools read, for other plugins' egress checks (mcp)
    return [ServiceSpec("sensitive_reads", lambda runtime: TAINT,
                        summary="the credential stores each session read (reads_of(session_id))"),
            # the fs tools' read guard plus workspace containment, for other plugins' tools (vision)
            ServiceSpec(FILE_READS_SERVICE, file_reads,
                        summary="admit_workspace_read(ctx, path, tool): the canonical path a tool may read"),
            ServiceSpec(ARCHIVES_SERVICE, _archives,
                        summary="unpack an archive with the zip-slip, link and bomb guards (extract)")]


def _archives(runtime: RuntimeView) -> CheckedArchives:
    from .fs.checked_archives import GuardedArchives

    return GuardedArchives()
