"""The `telegram` service (the running channel) as other plugins see it: its name and what
the serve routes and sidecar requests call on it (see plugins/metrics/metrics_contract.py
for what a contract module may hold).
"""

from __future__ import annotations

from typing import Any, Protocol

TELEGRAM_SERVICE = "telegram"


class TelegramControl(Protocol):
    """The channel's status and its controls; a status never carries the token."""

    def status(self) -> dict[str, Any]: ...

    async def control(self, action: str, *, token: str | None = None,
                      seconds: float | None = None) -> dict[str, Any]:
        """Apply one action of `atomic-agent telegram` (persisted first, then applied); the new
        status. ValueError says why an action was refused."""
        ...

    def scrub(self, text: str) -> str:
        """`text` with the bot token removed (for error messages that may quote it)."""
        ...
