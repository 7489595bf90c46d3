"""The `egress` service (egress_contract.Egress): the SSRF guard plus the egress policy, for
tools of other plugins. It reads the `http` block at each call, so a config edit applies."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .egress_policy import admit_egress
from .http_config import MODE_ALLOWLIST_ONLY, host_listed, http_config
from .ssrf_guard import SsrfBlocked, check_url

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


class EgressService:
    def __init__(self, runtime: RuntimeView) -> None:
        self._runtime = runtime

    async def admit_url(self, ctx: Any, tool: str, url: str) -> str | None:
        config = http_config(self._runtime)
        try:
            target = await check_url(url, config.private_hosts)
        except SsrfBlocked as exc:
            return str(exc)
        decision = await admit_egress(ctx, tool, "GET", url, target.host, config)
        return None if decision.allowed else decision.message

    async def reachable(self, url: str) -> str | None:
        config = http_config(self._runtime)
        try:
            target = await check_url(url, config.private_hosts)
        except SsrfBlocked as exc:
            return str(exc)
        if config.approval_mode == MODE_ALLOWLIST_ONLY and not host_listed(target.host, config.allowed_hosts):
            return f"{target.host} is not in http.allowedHosts and http.approvalMode is allowlist-only"
        return None

    def listed(self, host: str) -> bool:
        return host_listed(host, http_config(self._runtime).allowed_hosts)
