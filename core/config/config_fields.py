"""Field constructors for config blocks: a default, an allowed range, an env override."""

from __future__ import annotations

from typing import Any

import attrs

# Field names on disk are camelCase (`maxParallelToolCalls`); in Python, snake_case.

def to_camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


ENV_KEY = "atomic_agent_env"
RANGE_KEY = "atomic_agent_range"
CLAMP_KEY = "atomic_agent_clamp"


def _range_validator(lo: int | float, hi: int | float) -> Any:
    kind = "an integer" if isinstance(lo, int) and isinstance(hi, int) else "a number"

    def check(_inst: object, attribute: attrs.Attribute[Any], value: Any) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not lo <= value <= hi:
            raise ValueError(f"{to_camel(attribute.name)} must be {kind} in {lo}..{hi}, got {value!r}")

    return check


def int_field(default: float, lo: float, hi: float, env: str | None = None, clamp: bool = False) -> Any:
    """A number knob (an int unless the bounds are floats). Out of range is an error in config.json; env values clamp when `clamp`."""
    return attrs.field(default=default, validator=_range_validator(lo, hi),
                       metadata={ENV_KEY: env, RANGE_KEY: (lo, hi), CLAMP_KEY: clamp})


def value_field(default: Any, env: str | None = None, choices: tuple[str, ...] | None = None) -> Any:
    """A str/bool knob, optionally restricted to `choices` and overridable from `env`."""
    validator = None
    if choices is not None:
        def validator(_inst: object, attribute: attrs.Attribute[Any], value: Any) -> None:
            if value not in choices:
                raise ValueError(f"{to_camel(attribute.name)} must be one of {', '.join(choices)}; got {value!r}")
    if isinstance(default, (list, tuple)):
        return attrs.field(factory=lambda: tuple(default), converter=tuple, metadata={ENV_KEY: env})
    return attrs.field(default=default, validator=validator, metadata={ENV_KEY: env})
