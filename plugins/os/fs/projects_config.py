"""The `projects` config block: directories whose direct children are project folders."""

from __future__ import annotations

import attrs

from atomic_agent.api import ConfigBlock, value_field


@attrs.frozen
class ProjectsConfig:
    """`projects.roots`: absolute dirs (`~` allowed) scanned one level deep by os.fs.locate_project."""

    roots: tuple[str, ...] = value_field(())


def projects_config_block() -> ConfigBlock:
    return ConfigBlock(key="projects", cls=ProjectsConfig)
