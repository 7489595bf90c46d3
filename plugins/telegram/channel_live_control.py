"""Live control of the Telegram channel: enable/disable, token, owner, pairing, restart.

Every operation persists first (config.json through the config loader, the token in
`.env`) and then applies to the running channel. Changes another process made (the CLI)
are picked up at the polling loop's next cycle, by the files' modification times. A mixin
of TelegramChannel: it works on the channel's own state.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .bot_token import clear_token, store_token
from .channel_states import DISABLED, DISABLED_REASON, DOWN, MISSING_TOKEN, STOPPED, UP
from .pairing_window import DEFAULT_WINDOW_S, close_window, open_window, window_open
from .telegram_config import persist_settings, read_settings

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

CONTROL_ACTIONS = ("status", "enable", "disable", "restart", "pair", "cancel_pairing", "clear_owner", "set_token",
                   "clear_token")


class ChannelLiveControl:
    """Needs from the channel: runtime, state_dir, settings, owner_user_id, state, reason,
    bridge, status(), scrub(), _start_polling(), _stop_polling(), _release(), _set()."""

    runtime: RuntimeView
    state_dir: Path
    settings: Any
    owner_user_id: int | None
    state: str
    reason: str
    bridge: Any
    _stamps: tuple[float, float]
    _token: str | None
    _poll_task: Any
    _generation: int

    if TYPE_CHECKING:  # TelegramChannel's own methods, declared for the type checker only
        def status(self) -> dict[str, Any]: ...
        def scrub(self, text: str) -> str: ...
        async def _start_polling(self, raise_lock: bool = False) -> None: ...
        async def _stop_polling(self, state: str, reason: str) -> None: ...
        async def _release(self, state: str, reason: str) -> None: ...
        def _set(self, state: str, reason: str) -> None: ...

    # -- settings changed by another process (the CLI) ---------------------------------------
    def _file_stamps(self) -> tuple[float, float]:
        out = []
        for path in (self.state_dir / "config.json", self.state_dir / ".env"):
            try:
                out.append(os.stat(path).st_mtime_ns)
            except OSError:
                out.append(0)
        return (out[0], out[1])

    async def _refresh_settings(self) -> None:
        stamps = self._file_stamps()
        if stamps == self._stamps:
            return
        config_changed, env_changed = stamps[0] != self._stamps[0], stamps[1] != self._stamps[1]
        self._stamps = stamps
        if config_changed:
            self._reload_settings()
            if not self.settings.enabled:
                self._end_run()  # this loop ends itself
                await self._release(DISABLED, DISABLED_REASON)
                return
        if env_changed:  # a new token, or `atomic-agent telegram restart`
            self._end_run()
            await self._release(DOWN, "the token file changed; restarting")
            await self._start_polling()

    def _end_run(self) -> None:
        """Called from inside the polling loop: its run is over (it is not cancelled)."""
        self._poll_task = None
        self._generation += 1

    def _reload_settings(self) -> None:
        blocks = getattr(self.runtime, "config_blocks", None)
        path = getattr(self.runtime.config, "path", None)
        if blocks is None or path is None:
            return
        try:
            self.settings = read_settings(Path(path), blocks)
        except Exception as exc:
            print(f"atomic-agent: telegram settings not reloaded: {exc}", file=sys.stderr)
            return
        self.owner_user_id = self.settings.owner_user_id

    def _persist(self, **changes: Any) -> None:
        blocks = getattr(self.runtime, "config_blocks", None)
        path = getattr(self.runtime.config, "path", None)
        if blocks is not None and path is not None:
            persist_settings(Path(path), blocks, **changes)
            self._stamps = self._file_stamps()
        self._reload_settings_from(changes)

    def _reload_settings_from(self, changes: dict[str, Any]) -> None:
        import attrs

        fields = {"enabled": "enabled", "ownerUserId": "owner_user_id", "parseMode": "parse_mode"}
        self.settings = attrs.evolve(self.settings, **{fields[k]: v for k, v in changes.items() if k in fields})
        self.owner_user_id = self.settings.owner_user_id

    # -- pairing and live control -------------------------------------------------------------
    def pairing_open(self) -> bool:
        return window_open(self.state_dir)

    def start_pairing(self, seconds: float = DEFAULT_WINDOW_S) -> float:
        if self.state != UP:
            raise RuntimeError(f"pairing needs the channel up (it is {self.state}: {self.scrub(self.reason)})")
        return open_window(self.state_dir, seconds)

    def cancel_pairing(self) -> None:
        close_window(self.state_dir)

    async def claim_owner(self, user_id: int) -> None:
        close_window(self.state_dir)
        await self.set_owner(user_id)

    async def set_owner(self, user_id: int | None) -> None:
        """Persist, then apply: the bridge and the owner check read the live value."""
        self._persist(ownerUserId=user_id)
        self.bridge.deny_all("owner_changed")

    async def set_enabled(self, enabled: bool) -> dict[str, Any]:
        self._persist(enabled=enabled)
        if enabled:
            await self._start_polling()
        else:
            await self._stop_polling(DISABLED, DISABLED_REASON)
        return self.status()

    async def set_token(self, token: str | None) -> dict[str, Any]:
        if token is None:
            clear_token(self.state_dir)
        else:
            store_token(self.state_dir, token)
        self._stamps = self._file_stamps()
        if self._poll_task is not None or (token is not None and self.settings.enabled):
            return await self.restart()
        if token is None:
            await self._stop_polling(DOWN if self.settings.enabled else DISABLED, MISSING_TOKEN)
        return self.status()

    async def restart(self) -> dict[str, Any]:
        await self._stop_polling(STOPPED, "restarting")
        if self.settings.enabled:
            await self._start_polling()
        else:
            self._set(DISABLED, DISABLED_REASON)
        return self.status()

    async def control(self, action: str, *, token: str | None = None, seconds: float | None = None) -> dict[str, Any]:
        """One live-control operation by name (what the sidecar and serve expose): persisted
        first, then applied; the channel's status after it. ValueError names a bad request."""
        if action == "status":
            return self.status()
        if action in ("enable", "disable"):
            return await self.set_enabled(action == "enable")
        if action == "restart":
            return await self.restart()
        if action == "clear_owner":
            await self.set_owner(None)
            return self.status()
        if action == "clear_token":
            return await self.set_token(None)
        if action == "set_token":
            if not token:
                raise ValueError("set_token needs the token")
            return await self.set_token(token)
        if action == "pair":
            try:
                self.start_pairing(seconds or DEFAULT_WINDOW_S)
            except RuntimeError as exc:
                raise ValueError(str(exc)) from None
            return self.status()
        if action == "cancel_pairing":
            self.cancel_pairing()
            return self.status()
        raise ValueError(f"unknown telegram action {action!r}; one of {', '.join(CONTROL_ACTIONS)}")

