"""skill.view and skill.run_script.

skill.view loads an enabled skill's instructions into the session's `### loaded-skills`
(shown from the next step on). skill.run_script runs one of a skill's scripts in the
session's working directory through the approval gate (category `script`), with the
filtered child environment plus only the variables the skill declares. The approval is
bound to the script's content: the `[a]` answer holds for this exact content (sha256), so
an edited script asks again, and a script changed while the person decided is asked about
again by the gate itself.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolContext, ToolResult, ToolSpec

    from .skills_service import SkillsService

VIEW = "skill.view"
RUN = "skill.run_script"
MAX_ARGS = 32
MAX_ARG_CHARS = 4096

VIEW_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string", "description": "a skill listed under ### skills"}},
    "required": ["name"],
    "additionalProperties": False,
}
RUN_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "the skill"},
        "script": {"type": "string", "description": "the script's path inside the skill, e.g. scripts/report.py"},
        "args": {"type": "array", "items": {"type": "string", "maxLength": MAX_ARG_CHARS}, "maxItems": MAX_ARGS,
                 "description": "command-line arguments"},
    },
    "required": ["name", "script"],
    "additionalProperties": False,
}


def skill_tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolSpec

    from .skills_contract import SKILLS_SERVICE

    def service() -> SkillsService:
        return runtime.service(SKILLS_SERVICE)

    async def view(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return view_skill(service(), str(args.get("name", "")), ctx)

    async def run(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
        return await run_skill_script(service(), runtime.environ, args, ctx)

    return [
        ToolSpec(VIEW, "Load a skill's instructions (from ### skills) into ### loaded-skills before following it.",
                 VIEW_SCHEMA, ResourceClass.PURE_READ, view, durable=True,
                 example='{"tool": "skill.view", "args": {"name": "log-triage"}}'),
        ToolSpec(RUN, "Run one of a loaded skill's scripts with arguments, in the working directory.", RUN_SCHEMA,
                 ResourceClass.APPROVAL_GATED, run, tier=Tier.RARE, approval_category="script",
                 example='{"tool": "skill.run_script", "args": {"name": "log-triage", "script": "scripts/triage.py", '
                         '"args": ["app.log"]}}'),
    ]


def view_skill(service: SkillsService, name: str, ctx: ToolContext) -> ToolResult:
    from atomic_agent.api import ToolResult

    from .skill_registry import SkillNotFoundError

    try:
        skill = service.registry.get(name)
    except SkillNotFoundError as exc:
        return ToolResult.error(str(exc), errorType="SkillNotFoundError")
    evicted = service.loaded.add(ctx.session_id, skill.name)
    scripts = f"; scripts: {', '.join(skill.scripts)}" if skill.scripts else ""
    env = f"; needs env: {', '.join(skill.env)}" if skill.env else ""
    dropped = f"; unloaded {', '.join(evicted)} (cap {service.loaded.cap})" if evicted else ""
    cut = " (SKILL.md was cut at 256 KiB)" if skill.truncated else ""
    return ToolResult.ok(f"loaded skill {skill.name}: its instructions are under ### loaded-skills from the next step"
                         f"{cut}{scripts}{env}{dropped}", skill=skill.name, directory=str(skill.directory))


def _arg_list(value: object) -> list[str] | str:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(a, str) for a in value):
        return "args must be a list of strings"
    if len(value) > MAX_ARGS or any(len(a) > MAX_ARG_CHARS or "\x00" in a for a in value):
        return f"args: at most {MAX_ARGS} strings of at most {MAX_ARG_CHARS} characters, no NUL bytes"
    return list(value)


async def run_skill_script(service: SkillsService, environ: Mapping[str, str], args: Mapping[str, Any],
                           ctx: ToolContext) -> ToolResult:
    from atomic_agent.api import ToolResult, approval_gate

    from .script_runner import ScriptRefused, file_digest, resolve_script, run_script, script_environment
    from .skill_registry import SkillNotFoundError

    argv_tail = _arg_list(args.get("args"))
    if isinstance(argv_tail, str):
        return ToolResult.error(argv_tail)
    try:
        skill = service.registry.get(str(args.get("name", "")))
        script = resolve_script(skill, str(args.get("script", "")))
        env = script_environment(skill, environ)
    except SkillNotFoundError as exc:
        return ToolResult.error(str(exc), errorType="SkillNotFoundError")
    except ScriptRefused as exc:
        return ToolResult.error(str(exc), errorType="ScriptRefused")
    argv = [*script.argv_prefix, str(script.path), *argv_tail]
    binding = approval_gate.ApprovalBinding.capture(RUN, ctx.working_dir, argv, [script.path])
    shape = f"skill:{skill.name}/{script.relative}@{script.digest[:16]}"
    declared = f"; env: {', '.join(skill.env)}" if skill.env else ""
    summary = (f"run skill script {skill.name}/{script.relative} {' '.join(argv_tail)}".rstrip()
               + f" (sha256 {script.digest[:12]}{declared}) in {ctx.working_dir}")
    if not await ctx.ask_approval("script", summary, binding=binding, command_shape=shape):
        return ToolResult.error(f"not approved: {summary}; ask the user, or do it another way", denied=True,
                                category="script")
    try:  # what runs must be what was approved, to the byte
        unchanged = file_digest(script.path) == script.digest
    except OSError:
        unchanged = False
    if not unchanged:
        return ToolResult.error(f"{skill.name}/{script.relative} changed after it was approved; nothing ran. Call "
                                "skill.run_script again to be asked about the new content", category="script")
    cfg = service.config
    try:
        outcome = await run_script(argv, ctx.working_dir, env, cfg.script_timeout_s, cfg.max_output_chars,
                                   ctx.cancelled)
    except OSError as exc:
        return ToolResult.error(f"could not start {skill.name}/{script.relative}: {exc.strerror or exc}")
    details = {"skill": skill.name, "script": script.relative, "sha256": script.digest, "exitCode": outcome.exit_code}
    output = outcome.output.strip() or "(no output)"
    if outcome.cancelled:
        return ToolResult("cancelled", f"{skill.name}/{script.relative} cancelled\n{output}", details)
    if outcome.timed_out:
        return ToolResult.error(f"{skill.name}/{script.relative} timed out after {cfg.script_timeout_s}s and was "
                                f"killed\n{output}", **details)
    if outcome.exit_code != 0:
        return ToolResult.error(f"{skill.name}/{script.relative} exit {outcome.exit_code}\n{output}", **details)
    return ToolResult.ok(f"{skill.name}/{script.relative} exit 0\n{output}", **details)
