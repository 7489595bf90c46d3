"""Registered tools by name, with their resource classes and tiers."""

from __future__ import annotations

from collections.abc import Iterable

from atomic_agent.records.tool_spec import ResourceClass, Tier, ToolSpec

TERMINAL_TOOLS = ("reply", "finish")


class ToolRegistry:
    """An immutable set of ToolSpecs; names sorted so prompts and grammars are deterministic."""

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._specs = {spec.name: spec for spec in sorted(specs, key=lambda s: s.name)}
        for spec in self._specs.values():
            if spec.name in TERMINAL_TOOLS and spec.resource_class is not ResourceClass.TERMINAL:
                raise ValueError(f"{spec.name} must have resource class terminal")

    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def resource_class(self, name: str) -> ResourceClass:
        """The tool's class; unregistered names are UNKNOWN (never allowed in a batch)."""
        spec = self._specs.get(name)
        return spec.resource_class if spec is not None else ResourceClass.UNKNOWN

    def frequent(self) -> list[ToolSpec]:
        return [s for s in self._specs.values() if s.tier is Tier.FREQUENT]

    def rare(self) -> list[ToolSpec]:
        return [s for s in self._specs.values() if s.tier is Tier.RARE]

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)
