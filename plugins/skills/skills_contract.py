"""The `skills` service as other plugins (and the core's stable prefix) see it: its name and
what it answers (see plugins/metrics/metrics_contract.py for what a contract module may hold).

The core asks the provider of this name for the `### skills` lines of the stable prefix;
sidecar and serve list `catalog()` among their capabilities.
"""

from __future__ import annotations

from typing import Protocol

SKILLS_SERVICE = "skills"


class SkillCatalog(Protocol):
    """What the `skills` service answers."""

    def catalog_lines(self) -> list[str]:
        """One line per enabled skill, sorted by name, byte-stable while nothing on disk changes."""

    def catalog(self) -> list[dict[str, object]]:
        """Every enabled skill as {name, description, env, scripts}, sorted by name."""
