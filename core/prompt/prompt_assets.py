"""Where the runtime finds prompt templates and GBNF grammars, in one search order:

1. the user's overrides, `<state>/templates/` and `<state>/grammars/`;
2. every plugin's own `templates/` and `grammars/` folder beside its code (plugin name order);
3. the core's `atomic_agent.templates` and `atomic_agent.grammars` package data.

Plugins reach it as the `prompt_assets` service: `.env()` is the Jinja environment their
templates render with, `.grammar(name)` the text of a grammar file.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

TEMPLATES = "templates"
GRAMMARS = "grammars"
CORE_GRAMMARS_PACKAGE = "atomic_agent.grammars"


class PromptAssets:
    def __init__(self, state_dir: Path, plugin_template_dirs: Sequence[Path] = (),
                 plugin_grammar_dirs: Sequence[Path] = ()) -> None:
        self.state_dir = Path(state_dir)
        self.plugin_template_dirs = tuple(plugin_template_dirs)
        self.plugin_grammar_dirs = tuple(plugin_grammar_dirs)
        self._env: Any = None

    @classmethod
    def for_host(cls, state_dir: Path, host: Any) -> PromptAssets:
        from atomic_agent.plugin_host.plugin_assets import plugin_asset_dirs

        return cls(state_dir, plugin_asset_dirs(host, TEMPLATES), plugin_asset_dirs(host, GRAMMARS))

    def env(self) -> Any:
        """The Jinja environment (built once): user overrides > plugin templates > the core's."""
        if self._env is None:
            from atomic_agent.prompt.jinja_env import make_prompt_env

            self._env = make_prompt_env([self.state_dir / TEMPLATES], self.plugin_template_dirs)
        return self._env

    def grammar(self, name: str) -> str:
        """The text of grammar file `name`, from the first folder in search order that has it."""
        for folder in (self.state_dir / GRAMMARS, *self.plugin_grammar_dirs):
            candidate = folder / name
            if candidate.is_file():
                return candidate.read_text(encoding="utf-8")
        shipped = resources.files(CORE_GRAMMARS_PACKAGE) / name
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
        searched = [str(self.state_dir / GRAMMARS), *(str(d) for d in self.plugin_grammar_dirs), CORE_GRAMMARS_PACKAGE]
        raise FileNotFoundError(f"no grammar {name!r} in {', '.join(searched)}")
