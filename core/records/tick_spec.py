"""What a plugin registers to have the runtime call it periodically: a named tick."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import attrs


def _check_interval(_inst: object, _attr: attrs.Attribute, value: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"interval_s must be a positive number of seconds, got {value!r}")


@attrs.frozen
class TickSpec:
    """`run()` is awaited every `interval_s` seconds while the runtime runs.

    The runtime owns the timer: one tick of a name at a time (a tick still running when the
    next is due is not entered again; the timer waits for it), a tick that raises is counted
    and reported and the timer keeps going, and closing the runtime stops every tick before
    the plugins' services close.
    """

    name: str
    interval_s: float = attrs.field(validator=_check_interval)
    run: Callable[[], Awaitable[object]]
    summary: str = ""
    plugin: str = ""
