"""What a plugin registers to share an object with other plugins: a named service."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs


@attrs.frozen
class ServiceSpec:
    """A service `name` built by `factory(runtime)` the first time someone asks for it.

    `close(service)`, when given, runs once when the runtime closes (after
    `runtime_stopping`), for services that were built; it may be async.
    """

    name: str
    factory: Callable[[Any], Any]
    close: Callable[[Any], Awaitable[None] | None] | None = None
    summary: str = ""
    plugin: str = ""
