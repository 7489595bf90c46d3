"""Registered tools by name, with their resource classes and tiers.

Most tools come from `register_tools` once per runtime and never change. A plugin whose
tools come and go while the runtime runs (the MCP client: servers connect, disconnect,
announce new catalogs) owns a *live group* instead: `set_live_tools(owner, specs)`
replaces that owner's whole group at once. Every change bumps `generation`; the runtime
compares it with the generation its prompt plan was built from and rebuilds the stable
prefix and the grammar's tool-name alternation before the next step, so the model only
ever sees, and the grammar only admits, the names that are registered right now.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from atomic_agent.hook_records import ResourceClass, Tier, ToolSpec

# Check a call's args against the tool's JSON Schema before the tool runs.

@lru_cache(maxsize=512)
def _validator_for(schema_json: str) -> Any:
    import json

    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls(schema)


def args_errors(schema: Mapping[str, Any], args: Mapping[str, Any], limit: int = 3) -> list[str]:
    """Human-readable problems with `args` (empty when valid), at most `limit` of them."""
    import json

    validator = _validator_for(json.dumps(schema, sort_keys=True))
    problems = []
    for error in sorted(validator.iter_errors(dict(args)), key=lambda e: list(e.path)):
        where = ".".join(str(p) for p in error.path) or "args"
        problems.append(f"{where}: {error.message}")
        if len(problems) >= limit:
            break
    return problems


TERMINAL_TOOLS = ("reply", "finish")


class ToolNameConflictError(ValueError):
    """A live tool would shadow a tool another plugin (or another live group) owns."""


class ToolRegistry:
    """ToolSpecs by name, sorted so prompts and grammars are deterministic.

    The `register_tools` set is fixed at construction; live groups change only through
    `set_live_tools`.
    """

    def __init__(self, specs: Iterable[ToolSpec]) -> None:
        self._static = {spec.name: spec for spec in specs}
        for spec in self._static.values():
            _check_terminal(spec)
        self._live: dict[str, dict[str, ToolSpec]] = {}
        self.generation = 0
        self._specs: dict[str, ToolSpec] = {}
        self._rebuild()

    # -- live groups ---------------------------------------------------------------------------
    def set_live_tools(self, owner: str, specs: Iterable[ToolSpec]) -> None:
        """Replace every live tool of `owner` with `specs` (empty: remove them all).

        Atomic: a name that collides with a `register_tools` tool or another owner's live
        tool raises ToolNameConflictError and leaves the registry as it was. The
        generation moves only when the set of specs actually changed.
        """
        group = {}
        for spec in specs:
            _check_terminal(spec)
            if spec.name in group:
                raise ToolNameConflictError(f"live tool {spec.name!r} is listed twice by {owner!r}")
            if spec.name in self._static:
                raise ToolNameConflictError(f"live tool {spec.name!r} of {owner!r} collides with the tool registered "
                                            f"by plugin {self._static[spec.name].plugin or '?'!r}")
            for other, tools in self._live.items():
                if other != owner and spec.name in tools:
                    raise ToolNameConflictError(f"live tool {spec.name!r} of {owner!r} is already owned by {other!r}")
            group[spec.name] = spec
        if _descriptors(self._live.get(owner, {})) == _descriptors(group):
            if group:
                self._live[owner] = group  # same prompt and grammar; the new runners take over
                self._rebuild()
            return
        if group:
            self._live[owner] = group
        else:
            self._live.pop(owner, None)
        self._rebuild()
        self.generation += 1

    def live_tools(self, owner: str) -> list[ToolSpec]:
        return sorted(self._live.get(owner, {}).values(), key=lambda s: s.name)

    def _rebuild(self) -> None:
        merged = dict(self._static)
        for tools in self._live.values():
            merged.update(tools)
        self._specs = {name: merged[name] for name in sorted(merged)}

    # -- lookups -------------------------------------------------------------------------------
    def get(self, name: str) -> ToolSpec | None:
        return self._specs.get(name)

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def terminal_text_args(self) -> dict[str, str | None]:
        """The tools that end a turn (reply, finish: only ever the last call of a batch), each
        with its one required string argument (`text`, `summary`), None when it has another shape."""
        return {name: _sole_text_arg(spec.args_schema) for name, spec in self._specs.items()
                if spec.resource_class is ResourceClass.TERMINAL}

    def runs_alone(self, name: str) -> bool:
        """A tool that asks for approval must be the only call of its batch (the batch
        validator's rule, and the grammar's `lone-call`)."""
        spec = self._specs.get(name)
        return spec is not None and (spec.resource_class is ResourceClass.APPROVAL_GATED
                                     or bool(spec.approval_category))

    def lone_names(self) -> list[str]:
        """The tools that must run alone (see `runs_alone`)."""
        return [name for name in self._specs if self.runs_alone(name)]

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


def _check_terminal(spec: ToolSpec) -> None:
    if spec.name in TERMINAL_TOOLS and spec.resource_class is not ResourceClass.TERMINAL:
        raise ValueError(f"{spec.name} must have resource class terminal")


def _descriptors(group: dict[str, ToolSpec]) -> dict[str, tuple[object, ...]]:
    """What the prompt and the batch rules see of each tool (its runner left out)."""
    return {name: (s.summary, repr(s.args_schema), s.resource_class, s.tier, s.approval_category, s.example,
                   s.durable, s.plugin) for name, s in group.items()}


def _sole_text_arg(schema: Mapping[str, Any]) -> str | None:
    properties = schema.get("properties") or {}
    required = schema.get("required") or []
    if len(properties) == 1 and list(properties) == list(required) and properties[required[0]].get("type") == "string":
        return str(required[0])
    return None
