"""The `sessionSearch` config block: the sessions.search / sessions.open tools and their scope."""

from __future__ import annotations

from typing import Any

import attrs

from atomic_agent.api import value_field

CHANNELS = ("local", "http", "telegram")


def _channels(_inst: object, attribute: attrs.Attribute[Any], names: tuple[str, ...]) -> None:
    unknown = [n for n in names if n not in CHANNELS]
    if unknown:
        raise ValueError(f"{attribute.name} must name channels among {', '.join(CHANNELS)}; got {', '.join(unknown)}")


@attrs.frozen
class SessionSearchConfig:
    """`enabled` registers the tools. A session reads the sessions of its own channel;
    `alsoReadable` lists further channels every session may read (empty: none, so a Telegram
    chat never reads a serve client's sessions)."""

    enabled: bool = value_field(True, env="ATOMIC_AGENT_SESSION_SEARCH")
    also_readable: tuple[str, ...] = attrs.field(default=(), converter=tuple, validator=_channels)
