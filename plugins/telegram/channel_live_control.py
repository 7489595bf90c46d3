"""Live control of the Telegram channel: enable/disable, token, restart, and the settings
another process changed.

Every operation persists first (config.json through the config loader, the token in
`.env`) and then applies to the running channel. Changes another process made (the CLI)
are picked up at the polling loop's next cycle (`follow_files`), by the files'
modification times.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .bot_token import clear_token, store_token
from .channel_settings import ChannelSettings
from .channel_states import DISABLED, DISABLED_REASON, DOWN, MISSING_TOKEN, STOPPED
from .owner_pairing import OwnerPairing
from .pairing_window import DEFAULT_WINDOW_S
from .polling_link import PollingLink

CONTROL_ACTIONS = ("status", "enable", "disable", "restart", "pair", "cancel_pairing", "clear_owner", "set_token",
                   "clear_token")


class ChannelLiveControl:
    def __init__(self, state_dir: Path, settings: ChannelSettings, link: PollingLink, pairing: OwnerPairing,
                 status: Callable[[], dict[str, Any]]) -> None:
        self._state_dir = state_dir
        self._settings = settings
        self._link = link
        self._pairing = pairing
        self._status = status

    async def follow_files(self) -> None:
        """At each polling cycle: apply what another process changed (it may end this run)."""
        config_changed, env_changed = self._settings.changed_files()
        if config_changed:
            self._settings.reload()
            if not self._settings.current.enabled:
                self._link.end_run()  # this loop ends itself
                await self._link.release(DISABLED, DISABLED_REASON)
                return
        if env_changed:  # a new token, or `atomic-agent telegram restart`
            self._link.end_run()
            await self._link.release(DOWN, "the token file changed; restarting")
            await self._link.start()

    async def set_enabled(self, enabled: bool) -> dict[str, Any]:
        self._settings.persist(enabled=enabled)
        if enabled:
            await self._link.start()
        else:
            await self._link.stop(DISABLED, DISABLED_REASON)
        return self._status()

    async def set_token(self, token: str | None) -> dict[str, Any]:
        if token is None:
            clear_token(self._state_dir)
        else:
            store_token(self._state_dir, token)
        self._settings.restamp()
        if self._link.polling or (token is not None and self._settings.current.enabled):
            return await self.restart()
        if token is None:
            await self._link.stop(DOWN if self._settings.current.enabled else DISABLED, MISSING_TOKEN)
        return self._status()

    async def restart(self) -> dict[str, Any]:
        await self._link.stop(STOPPED, "restarting")
        if self._settings.current.enabled:
            await self._link.start()
        else:
            self._link.set(DISABLED, DISABLED_REASON)
        return self._status()

    async def control(self, action: str, *, token: str | None = None, seconds: float | None = None) -> dict[str, Any]:
        """One live-control operation by name (what the sidecar and serve expose): persisted
        first, then applied; the channel's status after it. ValueError names a bad request."""
        if action == "status":
            return self._status()
        if action in ("enable", "disable"):
            return await self.set_enabled(action == "enable")
        if action == "restart":
            return await self.restart()
        if action == "clear_owner":
            await self._pairing.set_owner(None)
            return self._status()
        if action == "clear_token":
            return await self.set_token(None)
        if action == "set_token":
            if not token:
                raise ValueError("set_token needs the token")
            return await self.set_token(token)
        if action == "pair":
            try:
                self._pairing.start(seconds or DEFAULT_WINDOW_S)
            except RuntimeError as exc:
                raise ValueError(str(exc)) from None
            return self._status()
        if action == "cancel_pairing":
            self._pairing.cancel()
            return self._status()
        raise ValueError(f"unknown telegram action {action!r}; one of {', '.join(CONTROL_ACTIONS)}")
