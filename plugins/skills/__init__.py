"""Skills: directories with a SKILL.md (instructions, optional scripts) the agent lists in
`### skills`, loads with skill.view into `### loaded-skills`, and whose scripts it runs with
skill.run_script through the approval gate (category `script`).

Skills live in `<state>/skills` (starters are seeded there once) and in the configured extra
roots; `skills.disabled` hides one without touching its files. Hookimpls only; everything
else is imported inside the hooks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from atomic_agent.api import hookimpl

if TYPE_CHECKING:
    import typer

    from atomic_agent.api import ConfigBlock, DoctorFinding, MemoryPhase, RuntimeView, ServiceSpec, ToolSpec

    from .skills_contract import SkillCatalog

CONFIG_KEY = "skills"


@hookimpl
def register_config_blocks() -> Iterable[ConfigBlock]:
    from atomic_agent.api import ConfigBlock

    from .skills_config import SkillsConfig

    return [ConfigBlock(key=CONFIG_KEY, cls=SkillsConfig)]


@hookimpl
def register_services() -> Iterable[ServiceSpec]:
    from atomic_agent.api import ServiceSpec

    from .skills_contract import SKILLS_SERVICE

    return [ServiceSpec(SKILLS_SERVICE, _skills_service, summary="the skills catalog (### skills) and loaded skills")]


def _skills_service(runtime: RuntimeView) -> SkillCatalog:
    from .skills_service import SkillsService

    return SkillsService(runtime)


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    from .skill_tools import skill_tool_specs

    return skill_tool_specs(runtime)


@hookimpl
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    from atomic_agent.api import MemoryPhase

    from .skills_contract import SKILLS_SERVICE

    def sections(session_id: str, _user_text: str) -> list:
        return runtime.service(SKILLS_SERVICE).loaded_sections(session_id)

    # order 0: the loaded skills open the tail (their own slot); no hot or cold path
    return [MemoryPhase("skills", order=0, sections=sections)]


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from .skill_commands import skill_app

    app.add_typer(skill_app, name="skill")


@hookimpl
def report_doctor_findings(state_dir) -> Iterable[DoctorFinding]:
    from atomic_agent.api import DoctorFinding

    from .skill_registry import SkillRegistry

    problems = SkillRegistry(state_dir).scan().problems
    return [DoctorFinding("skills", "warn", p.problem, advice="fix or remove that skill directory", path=p.where,
                          plugin="skills") for p in problems]
