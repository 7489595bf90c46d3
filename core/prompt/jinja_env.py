"""The one Jinja2 environment factory for prompts (StrictUndefined, no autoescape).

Template search order: `<state>/templates/` (a user's override) > plugin template
folders (see prompt_assets) > the core's `atomic_agent.templates` package.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def core_templates_dir() -> Path:
    from importlib import resources

    return Path(str(resources.files("atomic_agent.templates")))


def make_prompt_env(override_dirs: Sequence[Path] = (), plugin_dirs: Sequence[Path] = ()) -> Any:
    import jinja2

    searched = [*override_dirs, *plugin_dirs]
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader([str(d) for d in searched if d.is_dir()])]
    loaders.append(jinja2.FileSystemLoader(str(core_templates_dir())))
    from atomic_agent.prompt.describe_tool import first_clause

    env = jinja2.Environment(
        loader=jinja2.ChoiceLoader(loaders),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["first_clause"] = first_clause
    return env
