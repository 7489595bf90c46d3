"""`atomic-agent skill list|show|enable|disable|install PATH|remove`.

Everything but an archive install works on the state dir and config.json directly and exits
fast; an archive install starts a runtime for the os plugin's `archives` service (its guards).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail, print_json, print_table

skill_app = typer.Typer(no_args_is_help=True, help="Skills: installable instructions and scripts the agent loads on demand.")


def _registry(ctx: typer.Context) -> Any:
    from .skill_registry import SkillRegistry
    from .skills_service import registry_for, skills_config

    boot = current_cli_state(ctx).require()
    registry = registry_for(boot.state_dir, skills_config(boot))
    assert isinstance(registry, SkillRegistry)
    return registry


def _find(registry: Any, name: str) -> Any:
    for skill in registry.list_all():
        if skill.name == name:
            return skill
    known = ", ".join(s.name for s in registry.list_all()) or "none"
    fail(f"no skill named {name!r} (installed: {known}); `atomic-agent skill list` shows them")


@skill_app.command("list")
def skill_list(ctx: typer.Context, json_out: bool = typer.Option(False, "--json")) -> None:
    """Every installed skill, enabled or not, and the skill directories that could not be read."""
    from .skill_install import read_provenance

    registry = _registry(ctx)
    scan = registry.scan()
    provenance = read_provenance(registry.state_dir)
    rows = [{"name": s.name, "enabled": s.name not in registry.disabled, "description": s.description,
             "directory": str(s.directory), "env": list(s.env), "scripts": list(s.scripts),
             "source": provenance.get(s.name, {}).get("source", "")} for s in scan.skills]
    problems = [{"where": p.where, "problem": p.problem} for p in scan.problems]
    if json_out:
        print_json({"skills": rows, "problems": problems})
        return
    print_table(["name", "state", "description", "directory"],
                [[r["name"], "enabled" if r["enabled"] else "disabled", str(r["description"])[:60], r["directory"]]
                 for r in rows])
    for problem in problems:
        print(f"problem: {problem['problem']}")


@skill_app.command("show")
def skill_show(ctx: typer.Context, name: str, json_out: bool = typer.Option(False, "--json")) -> None:
    """One skill: its front matter, provenance and instructions."""
    from .skill_install import read_provenance

    registry = _registry(ctx)
    skill = _find(registry, name)
    data = {"name": skill.name, "description": skill.description, "enabled": skill.name not in registry.disabled,
            "directory": str(skill.directory), "env": list(skill.env), "scripts": list(skill.scripts),
            "provenance": read_provenance(registry.state_dir).get(skill.name), "body": skill.body}
    if json_out:
        print_json(data)
        return
    for key in ("name", "description", "enabled", "directory", "env", "scripts", "provenance"):
        print(f"{key}: {data[key]}")
    print()
    print(skill.body)


def _set_disabled(ctx: typer.Context, name: str, disabled: bool) -> None:
    from atomic_agent.api import config_file, read_raw_config

    registry = _registry(ctx)
    _find(registry, name)
    boot = current_cli_state(ctx).require()
    path = boot.config.path
    raw = read_raw_config(path)
    block = raw.get("skills")
    listed = block.get("disabled") if isinstance(block, dict) else None
    current = [n for n in (listed or []) if isinstance(n, str)]
    if (name in current) == disabled:
        print(f"{name} is already {'disabled' if disabled else 'enabled'}")
        return
    updated = sorted({*current, name}) if disabled else [n for n in current if n != name]
    config_file.save_raw_config(path, config_file.set_key(raw, "skills.disabled", updated), boot.config_blocks)
    print(f"{name} {'disabled' if disabled else 'enabled'} (the stable prefix changes once: the next step rebuilds "
          "its KV cache)")


@skill_app.command("enable")
def skill_enable(ctx: typer.Context, name: str) -> None:
    """Show a disabled skill to the agent again."""
    _set_disabled(ctx, name, False)


@skill_app.command("disable")
def skill_disable(ctx: typer.Context, name: str) -> None:
    """Hide a skill from the agent (### skills, skill.view); its files stay."""
    _set_disabled(ctx, name, True)


@skill_app.command("install")
def skill_install(ctx: typer.Context, path: Path, replace: bool = typer.Option(False, "--replace"),
                  json_out: bool = typer.Option(False, "--json")) -> None:
    """Install a skill from a local directory or archive (zip, tar, tar.gz); never from a network."""
    from .skill_install import SkillInstallError, install_skill

    boot = current_cli_state(ctx).require()
    unpack = _unpacker(ctx) if path.expanduser().is_file() else None
    try:
        skill, record = install_skill(boot.state_dir, path, unpack, replace=replace)
    except SkillInstallError as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"install failed: {exc.strerror or exc}")
    if json_out:
        print_json({"name": skill.name, "directory": str(skill.directory), "provenance": record})
        return
    print(f"installed {skill.name} into {skill.directory} (sha256 {record['sha256'][:12]}, from {record['source']})")


def _unpacker(ctx: typer.Context) -> Any:
    """The os plugin's guarded extract, from a runtime started for it (closed right after each use)."""
    import asyncio

    from atomic_agent.plugins.os.archives_contract import ARCHIVES_SERVICE

    def unpack(archive: Path, dest: Path, max_bytes: int) -> object:
        async def go() -> object:
            from atomic_agent.api import create_runtime

            runtime = await create_runtime(boot_context=current_cli_state(ctx).require())
            try:
                service = runtime.service(ARCHIVES_SERVICE, None)
                if service is None:
                    raise ValueError("installing from an archive needs the os plugin (its archive guards); "
                                     "enable it or install from a directory")
                return service.extract(archive, dest, max_bytes)
            finally:
                await runtime.close()

        return asyncio.run(go())

    return unpack


@skill_app.command("remove")
def skill_remove(ctx: typer.Context, name: str) -> None:
    """Delete an installed skill's directory (a starter stays removed)."""
    from .skill_install import SkillInstallError, remove_skill

    registry = _registry(ctx)
    skill = _find(registry, name)
    try:
        directory = remove_skill(registry.state_dir, skill)
    except SkillInstallError as exc:
        fail(str(exc))
    print(f"removed {name} ({directory})")
