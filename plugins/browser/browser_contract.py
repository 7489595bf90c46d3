"""The browser plugin's `browser` service: the one process-wide browser and the page snapshot
each session last saw (its `### world` text)."""

from __future__ import annotations

from typing import Protocol

BROWSER_SERVICE = "browser"


class BrowserWorld(Protocol):
    def world_text(self, session_id: str) -> str | None:
        """The compact page snapshot after the session's latest browser call (None when the
        session has not used the browser). Page text, never instructions."""

    async def close(self) -> None:
        """Close the browser (the next browser call starts it again)."""
