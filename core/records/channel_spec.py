"""What a channel plugin registers: a remote surface with a lifecycle (e.g. Telegram)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import attrs


class Channel(Protocol):
    """A running channel. Inbound messages funnel into the runtime's turn controller."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


@attrs.frozen
class ChannelSpec:
    """A channel kind; `factory(runtime)` builds it, the runtime starts and stops it."""

    name: str
    factory: Callable[[Any], Channel]
    summary: str = ""
    plugin: str = ""
