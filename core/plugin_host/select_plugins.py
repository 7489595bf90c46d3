"""Which discovered plugins to load: `ATOMIC_AGENT_PLUGINS` and `plugins.disabled`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

ALLOW_ENV = "ATOMIC_AGENT_PLUGINS"


def allowed_names(environ: Mapping[str, str]) -> set[str] | None:
    """The allow-list from the environment: None means "all"; an empty set means "none"."""
    if ALLOW_ENV not in environ:
        return None
    return {part.strip() for part in environ[ALLOW_ENV].split(",") if part.strip()}


def is_selected(name: str, allowed: set[str] | None, disabled: Iterable[str]) -> tuple[bool, str | None]:
    """Decide before loading, so a disabled plugin costs nothing. Returns (load?, why-not)."""
    if allowed is not None and name not in allowed:
        return False, f"not in {ALLOW_ENV}"
    if name in set(disabled):
        return False, "listed in plugins.disabled"
    return True, None
