"""Where `serve` may listen: loopback always; anything else only behind an API key."""

from __future__ import annotations

import ipaddress

LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def is_loopback(host: str) -> bool:
    name = host.strip().strip("[]").lower()
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False  # a hostname we cannot vouch for is treated as reachable from outside


def bind_problem(host: str, api_key: str | None, api_key_env: str) -> str | None:
    """Why binding `host` is refused (one paragraph), or None when it is allowed."""
    if is_loopback(host) or api_key:
        return None
    return (f"refusing to bind {host!r}: it is reachable from other machines and no API key is configured. "
            f"Set {api_key_env} (in the environment or the state dir's .env) so every request needs "
            f"'Authorization: Bearer <key>', or bind 127.0.0.1")
