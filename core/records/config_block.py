"""What a plugin registers to own a block of config.json."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class ConfigBlock:
    """A top-level block of config.json owned by a plugin.

    `cls` is a frozen attrs class with defaults for every field; keys on disk are the
    camelCase form of the field names. `migrate(raw)` receives the block's raw mapping
    as read from disk and returns it upgraded (idempotent); it runs before structuring.
    """

    key: str
    cls: type
    migrate: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    plugin: str = ""
