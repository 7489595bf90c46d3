"""The channel's settings: the `telegram` block as last read, and whether another process
(the CLI) changed config.json or `.env` since (by the files' modification times).

Every change is persisted first (config.json through the config loader) and then applied
here; the polling loop asks `changed_files()` at each cycle to pick up the CLI's changes.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from .telegram_config import TelegramConfig, persist_settings, read_settings, telegram_config

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

CHANGEABLE = {"enabled": "enabled", "ownerUserId": "owner_user_id", "parseMode": "parse_mode"}


class ChannelSettings:
    def __init__(self, runtime: RuntimeView, state_dir: Path) -> None:
        self._runtime = runtime
        self._state_dir = state_dir
        self.current: TelegramConfig = telegram_config(runtime)
        self._stamps = self._file_stamps()

    @property
    def owner_user_id(self) -> int | None:
        return self.current.owner_user_id

    def _file_stamps(self) -> tuple[float, float]:
        out = []
        for path in (self._state_dir / "config.json", self._state_dir / ".env"):
            try:
                out.append(os.stat(path).st_mtime_ns)
            except OSError:
                out.append(0)
        return (out[0], out[1])

    def restamp(self) -> None:
        """This process wrote the files itself: not a change to pick up."""
        self._stamps = self._file_stamps()

    def changed_files(self) -> tuple[bool, bool]:
        """(config.json changed, .env changed) since the last look; each change is seen once."""
        stamps = self._file_stamps()
        if stamps == self._stamps:
            return False, False
        changed = (stamps[0] != self._stamps[0], stamps[1] != self._stamps[1])
        self._stamps = stamps
        return changed

    def reload(self) -> None:
        blocks = getattr(self._runtime, "config_blocks", None)
        path = getattr(self._runtime.config, "path", None)
        if blocks is None or path is None:
            return
        try:
            self.current = read_settings(Path(path), blocks)
        except Exception as exc:
            print(f"atomic-agent: telegram settings not reloaded: {exc}", file=sys.stderr)

    def persist(self, **changes: Any) -> None:
        """Write `changes` (config field names) to config.json, then apply them here."""
        blocks = getattr(self._runtime, "config_blocks", None)
        path = getattr(self._runtime.config, "path", None)
        if blocks is not None and path is not None:
            persist_settings(Path(path), blocks, **changes)
            self.restamp()
        self.current = attrs.evolve(self.current, **{CHANGEABLE[k]: v for k, v in changes.items() if k in CHANGEABLE})
