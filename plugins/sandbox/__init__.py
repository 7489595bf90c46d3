"""The `sandbox` plugin: `os.shell.run` inside bubblewrap (`sandbox.mode` off | auto | always)
and worktree mode (`sandbox.worktree`: a session's os tools write into a git worktree of the
workspace; `atomic-agent sandbox diff|apply|discard SESSION`).

It owns the `sandbox` service (sandbox_contract) the os plugin consults; the box, the probe
and the worktrees are imported inside the hooks, so loading the plugin costs nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.api import (
        ConfigBlock,
        DoctorFinding,
        MemoryPhase,
        PromptSection,
        RuntimeView,
        ServiceSpec,
        TurnStart,
    )

    from .sandbox_contract import ShellSandbox


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .sandbox_config import SANDBOX_BLOCK, SandboxConfig

    return [ConfigBlock(key=SANDBOX_BLOCK, cls=SandboxConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    from .sandbox_contract import SANDBOX_SERVICE

    return [ServiceSpec(SANDBOX_SERVICE, _sandbox, summary="the shell box (bubblewrap) and the sessions' worktrees")]


def _sandbox(runtime: RuntimeView) -> ShellSandbox:
    from .shell_sandbox import BwrapSandbox

    return BwrapSandbox(runtime)


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    from atomic_agent.api import MemoryPhase

    from .sandbox_config import sandbox_config

    if not sandbox_config(runtime).worktree:
        return []  # worktree mode off: the prompt is byte-identical to a runtime without this plugin

    from .worktree_notice import WorktreeNotices

    notices = WorktreeNotices(runtime.state_dir)

    def sections(session_id: str, _user_text: str) -> list[PromptSection]:
        from .worktree_section import worktree_sections

        return worktree_sections(runtime.state_dir, session_id)

    def before_turn(start: TurnStart) -> None:
        notices.turn_began(start.session_id)

    def turn_notices(session_id: str, _turn_index: int) -> list[str]:
        # the person sees what waits in the worktree and how to bring it in (the model sees the
        # diff itself in ### worktree)
        return notices.turn_ended(session_id)

    return [MemoryPhase("sandbox-worktree", order=90, sections=sections, before_turn=before_turn,
                        turn_notices=turn_notices)]


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .sandbox_commands import sandbox_app

    app.add_typer(sandbox_app, name="sandbox",
                  help="Show, apply or discard a session's worktree edits (sandbox.worktree).")


@hookimpl
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    from .sandbox_doctor import sandbox_findings

    return sandbox_findings(state_dir)
