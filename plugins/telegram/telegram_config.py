"""The `telegram` config block and the settings the channel reads live from config.json.

On disk (camelCase)::

    "telegram": {"enabled": true, "ownerUserId": 123456789, "parseMode": "html",
                 "approvalTimeoutMs": 480000, "apiBase": "https://api.telegram.org",
                 "pollTimeoutS": 30}

The bot token is never part of this block: it lives only in `<state>/.env`
(`bot_token.py`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from atomic_agent.api import int_field, value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

TELEGRAM_BLOCK = "telegram"
HTML, PLAIN = "html", "plain"
DEFAULT_API_BASE = "https://api.telegram.org"
DEFAULT_APPROVAL_TIMEOUT_MS = 8 * 60 * 1000


def _owner(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"ownerUserId must be a positive Telegram user id or null, got {value!r}")
    return value


def _api_base(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith(("http://", "https://")):
        raise ValueError(f"apiBase must be an http(s) URL, got {value!r}")
    return value.rstrip("/")


@attrs.frozen
class TelegramConfig:
    """`enabled` gates start only (the channel exists whenever the block does);
    `ownerUserId` is the one user the bot obeys (null: nobody until paired)."""

    enabled: bool = value_field(False)
    owner_user_id: int | None = attrs.field(default=None, converter=_owner)
    parse_mode: str = value_field(HTML, choices=(HTML, PLAIN))
    approval_timeout_ms: int = int_field(DEFAULT_APPROVAL_TIMEOUT_MS, 1_000, 24 * 3600 * 1000)
    api_base: str = attrs.field(default=DEFAULT_API_BASE, converter=_api_base)
    poll_timeout_s: int = int_field(30, 0, 50)


def telegram_config(runtime: RuntimeView) -> TelegramConfig:
    """The block as the runtime loaded it (defaults when config.json does not name it)."""
    return runtime.config.blocks.get(TELEGRAM_BLOCK) or TelegramConfig()


def persist_settings(config_path: Path, config_blocks: Any, **changes: Any) -> None:
    """Write `changes` (camelCase keys of the block) into config.json, validated by the
    config loader, before anything is applied live."""
    from atomic_agent.api import config_file, read_raw_config

    raw = read_raw_config(config_path)
    block = raw.get(TELEGRAM_BLOCK)
    block = dict(block) if isinstance(block, dict) else {}
    block.update(changes)
    raw[TELEGRAM_BLOCK] = block
    config_file.save_raw_config(config_path, raw, config_blocks)


def read_settings(config_path: Path, config_blocks: Any) -> TelegramConfig:
    """The block as config.json holds it now (another process may have changed it)."""
    from atomic_agent.api import config_file, read_raw_config

    structured, _unknown = config_file.structure_config_blocks(read_raw_config(config_path), config_blocks, config_path)
    return structured.get(TELEGRAM_BLOCK) or TelegramConfig()
