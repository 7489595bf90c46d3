"""The `http` config block: who `os.http.request` may reach and when it asks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from atomic_agent.api import int_field, value_field

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

HTTP_BLOCK = "http"
MODE_GATE = "gate"
MODE_ALLOWLIST = "allowlist"
MODE_ALLOWLIST_ONLY = "allowlist-only"


@attrs.frozen
class HttpConfig:
    """`approvalMode`:
    - "gate" (default): every request asks the approval gate under `http` (the ladder
      stops asking from level 3, home);
    - "allowlist": hosts in `allowedHosts` go without asking, others ask;
    - "allowlist-only": hosts in `allowedHosts` go without asking, others are refused.

    `allowedHosts` entries are host names (`api.github.com`) or `*.suffix` patterns.
    `privateHosts` opts hosts out of the SSRF guard, which otherwise blocks loopback,
    private, link-local, CGNAT, multicast and cloud-metadata addresses for
    `os.http.request` and `os.web.fetch` alike: a name matches the URL's host, an
    address or CIDR (`127.0.0.1`, `192.168.1.0/24`) matches where the host resolves to.
    """

    approval_mode: str = value_field(MODE_GATE, choices=(MODE_GATE, MODE_ALLOWLIST, MODE_ALLOWLIST_ONLY))
    allowed_hosts: tuple[str, ...] = value_field(())
    private_hosts: tuple[str, ...] = value_field(())
    timeout_s: int = int_field(30, 1, 600)
    max_response_bytes: int = int_field(1024 * 1024, 1024, 256 * 1024 * 1024)
    max_redirects: int = int_field(5, 0, 20)
    max_retries: int = int_field(2, 0, 10)
    retry_base_delay_ms: int = int_field(500, 0, 60_000)
    retry_max_delay_ms: int = int_field(4000, 0, 60_000)


def http_config(runtime: RuntimeView) -> HttpConfig:
    """The configured block, or defaults when it is not registered (a bare test runtime)."""
    try:
        block = runtime.config.block(HTTP_BLOCK)
    except (KeyError, AttributeError):
        return HttpConfig()
    return block if isinstance(block, HttpConfig) else HttpConfig()


def host_listed(host: str, entries: tuple[str, ...]) -> bool:
    host = host.lower().rstrip(".")
    for entry in entries:
        entry = entry.strip().lower().rstrip(".")
        if entry.startswith("*.") and (host.endswith(entry[1:]) or host == entry[2:]):
            return True
        if host == entry:
            return True
    return False
