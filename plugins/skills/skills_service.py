"""The `skills` service: the registry as the runtime's config sets it, the per-session
loaded skills, and the `### loaded-skills` section built from them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from .loaded_skills import LoadedSkills
from .skill_registry import SkillRegistry

if TYPE_CHECKING:
    from atomic_agent.api import PromptSection, RuntimeView

CONFIG_KEY = "skills"
LOADED_HEADING = "loaded-skills"


def skills_config(runtime_or_boot: Any) -> Any:
    return runtime_or_boot.config.block(CONFIG_KEY)


def registry_for(state_dir: Path, cfg: Any) -> SkillRegistry:
    if cfg.seed_starters:
        from .starter_skills import seed_starter_skills

        seed_starter_skills(state_dir)
    return SkillRegistry(state_dir, cfg.roots, cfg.disabled)


class SkillsService:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime
        cfg = skills_config(runtime)
        self.registry = registry_for(runtime.state_dir, cfg)
        self.loaded = LoadedSkills(runtime.state_dir, cfg.loaded_cap)

    @property
    def config(self) -> Any:
        return skills_config(self.runtime)

    def catalog_lines(self) -> list[str]:
        return self.registry.catalog_lines()

    def catalog(self) -> list[dict[str, object]]:
        return self.registry.catalog()

    def loaded_sections(self, session_id: str) -> list[PromptSection]:
        """One `### loaded-skills` section with each loaded (and still enabled) skill's body,
        least recently loaded first, each body capped to `maxBodyTokens`."""
        from atomic_agent.api import PromptSection, capped_lines, estimate_tokens

        names = self.loaded.names(session_id)
        if not names:
            return []
        enabled = {s.name: s for s in self.registry.list()}
        parts = []
        for name in names:
            skill = enabled.get(name)
            if skill is None:  # disabled or removed since it was loaded
                continue
            body = capped_lines(skill.body.split("\n"), self.config.max_body_tokens, estimate_tokens)
            parts.append(f"## {skill.name}\n{body}")
        if not parts:
            return []
        return [PromptSection(LOADED_HEADING, "\n".join(parts), slot="loaded", dedupe_key=LOADED_HEADING)]
