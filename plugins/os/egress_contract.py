"""The os plugin's `egress` service: the network tools' destination policy, for another
plugin whose tool sends requests the model chose (the browser's navigations)."""

from __future__ import annotations

from typing import Any, Protocol

EGRESS_SERVICE = "egress"


class Egress(Protocol):
    async def admit_url(self, ctx: Any, tool: str, url: str) -> str | None:
        """None when `tool` may send a GET to `url` for the call `ctx`, else why not (a message
        the model can act on). The os tools' rules: the SSRF guard (loopback, private,
        link-local and metadata addresses refused unless listed in `http.privateHosts`), then
        the egress policy (`http.allowedHosts` go without asking, other hosts ask under `http`,
        `allowlist-only` refuses them; after a credential read, unlisted hosts ask under
        `sensitive_egress`). Asking goes through `ctx`'s approval gate."""

    async def reachable(self, url: str) -> str | None:
        """None when `url` passes the SSRF guard and the allowlist-only rule, else why not. It
        never asks anyone: for requests a page makes on its own (images, scripts, XHR)."""

    def listed(self, host: str) -> bool:
        """Whether `host` is in `http.allowedHosts` (names or `*.suffix`)."""
