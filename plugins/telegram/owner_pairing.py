"""Who owns the bot, and the pairing window through which the first private DM claims it.

The owner is persisted first (config.json) and then applied; every change of owner denies
the approvals still waiting on the old one's phone. The window is a file (pairing_window),
so `atomic-agent telegram pair` in another process opens it for the running channel.
"""

from __future__ import annotations

from pathlib import Path

from .approval_bridge import ApprovalBridge
from .channel_settings import ChannelSettings
from .channel_states import UP
from .pairing_window import DEFAULT_WINDOW_S, close_window, open_window, window_open
from .polling_link import PollingLink


class OwnerPairing:
    def __init__(self, state_dir: Path, settings: ChannelSettings, bridge: ApprovalBridge, link: PollingLink) -> None:
        self._state_dir = state_dir
        self._settings = settings
        self._bridge = bridge
        self._link = link

    def is_open(self) -> bool:
        return window_open(self._state_dir)

    def start(self, seconds: float = DEFAULT_WINDOW_S) -> float:
        if self._link.state != UP:
            raise RuntimeError(f"pairing needs the channel up (it is {self._link.state}: "
                               f"{self._link.scrub(self._link.reason)})")
        return open_window(self._state_dir, seconds)

    def cancel(self) -> None:
        close_window(self._state_dir)

    async def claim(self, user_id: int) -> None:
        close_window(self._state_dir)
        await self.set_owner(user_id)

    async def set_owner(self, user_id: int | None) -> None:
        """Persist, then apply: the bridge and the owner check read the live value."""
        self._settings.persist(ownerUserId=user_id)
        self._bridge.deny_all("owner_changed")
