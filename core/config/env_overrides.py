"""Apply `ATOMIC_AGENT_*` environment overrides declared in config field metadata."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from atomic_agent.config.config_errors import ConfigError
from atomic_agent.config.config_fields import CLAMP_KEY, ENV_KEY, RANGE_KEY

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _parse(raw: str, current: Any, env_name: str, field: attrs.Attribute) -> Any:
    if isinstance(current, bool):
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise ConfigError(None, env_name, f"{raw!r} is not a boolean", "Use 1/0, true/false, yes/no or on/off")
    if isinstance(current, int):
        try:
            value = int(raw.strip())
        except ValueError:
            raise ConfigError(None, env_name, f"{raw!r} is not an integer", "Set it to a whole number") from None
        lo, hi = field.metadata.get(RANGE_KEY, (value, value))
        if field.metadata.get(CLAMP_KEY):
            return max(lo, min(hi, value))
        if not lo <= value <= hi:
            raise ConfigError(None, env_name, f"{value} is out of range", f"Use a value in {lo}..{hi}")
        return value
    return raw


def apply_env_overrides(block: Any, environ: Mapping[str, str]) -> Any:
    """A copy of `block` with every field whose env var is set taken from the environment."""
    changes: dict[str, Any] = {}
    for field in attrs.fields(type(block)):
        env_name = field.metadata.get(ENV_KEY)
        if env_name and environ.get(env_name, "") != "":
            changes[field.name] = _parse(environ[env_name], getattr(block, field.name), env_name, field)
    return attrs.evolve(block, **changes) if changes else block
