"""One row of `atomic-agent plugins`: what a plugin is and whether it loaded."""

from __future__ import annotations

import attrs


@attrs.define
class PluginReport:
    """Status of one plugin: "loaded", "disabled" or "failed" (with the error)."""

    name: str
    distribution: str
    version: str
    status: str
    hooks: list[str] = attrs.field(factory=list)
    error: str | None = None
    essential: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "hooks": self.hooks,
            "error": self.error,
            "essential": self.essential,
        }
