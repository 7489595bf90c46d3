"""What the TUI's Telegram panel may do, and the only code of the panel that touches the runtime.

It drives the running channel's live control (every change persisted first, then applied)
and reads its status. The token goes from the masked field straight to the channel and is
never kept, returned or put in a message: the panel only learns whether one is stored.
Nothing here imports Textual.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from .bot_token import check_token_shape
from .pairing_window import DEFAULT_WINDOW_S, window_closes_at
from .telegram_contract import TELEGRAM_SERVICE as SERVICE

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView



class TelegramPanelOrchestrator:
    def __init__(self, runtime: RuntimeView) -> None:
        self.runtime = runtime

    @property
    def channel(self) -> Any:
        return self.runtime.service(SERVICE)

    def status(self) -> dict[str, Any]:
        return dict(self.channel.status())

    def pairing_seconds_left(self) -> int | None:
        """Whole seconds until the pairing window closes, or None when none is open."""
        closes = window_closes_at(self.channel.state_dir)
        return None if closes is None else max(0, int(closes - time.time() + 0.999))

    def status_lines(self) -> list[str]:
        status = self.status()
        left = self.pairing_seconds_left()
        owner = status["ownerUserId"]
        lines = [f"channel: {status['state']}" + (f" ({status['reason']})" if status["reason"] else ""),
                 f"enabled: {'yes' if status['enabled'] else 'no'}",
                 f"token: {'stored in .env' if status['hasToken'] else 'missing'}",
                 f"bot: @{status['bot']}" if status["bot"] else "bot: -",
                 f"owner: {owner}" if owner is not None else "owner: nobody (press p, then DM the bot)",
                 f"pairing: open, {left} s left" if left is not None else "pairing: closed",
                 f"approvals waiting: {status['pendingApprovals']}"]
        return lines

    async def set_enabled(self, enabled: bool) -> dict[str, Any]:
        return dict(await self.channel.set_enabled(enabled))

    @staticmethod
    def check_token(token: str) -> str:
        """The token stripped; ValueError (which never echoes it) when it cannot be a bot token."""
        return check_token_shape(token)

    async def set_token(self, token: str) -> dict[str, Any]:
        return dict(await self.channel.set_token(check_token_shape(token)))

    async def clear_token(self) -> dict[str, Any]:
        return dict(await self.channel.set_token(None))

    def start_pairing(self, seconds: float = DEFAULT_WINDOW_S) -> None:
        """RuntimeError (saying the channel's state) when the channel is not up."""
        self.channel.start_pairing(seconds)

    def cancel_pairing(self) -> None:
        self.channel.cancel_pairing()

    async def clear_owner(self) -> None:
        await self.channel.set_owner(None)

    async def restart(self) -> dict[str, Any]:
        return dict(await self.channel.restart())
