"""Where an HTTP MCP server may live: the http tool's SSRF rules, adapted to a server the
operator configured.

The host is resolved and every address checked. Loopback is allowed (a local server is
the ordinary case and the operator named it); a public address is allowed; a private,
link-local, CGNAT, multicast or reserved address is refused unless the server sets
`allowPrivateNetwork: true`; a cloud-metadata address is refused always. The SDK then
connects by name, so a DNS answer that changes between this check and the connect is not
caught here (the http tool pins addresses; the MCP transports do not expose that).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urlsplit

METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254", "192.0.0.192"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")


class UrlRefused(ValueError):
    """The server URL points somewhere the policy forbids; the message says where and how to allow it."""


def address_refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address, allow_private: bool) -> str | None:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address (never allowed)"
    if address.is_loopback:
        return None
    if address.is_unspecified or address.is_multicast:
        return "the unspecified or a multicast address (never allowed)"
    private = (address.is_link_local or address.is_private or (isinstance(address, ipaddress.IPv4Address)
                                                               and address in _CGNAT)
               or not address.is_global or address.is_reserved)
    if private and not allow_private:
        return "a private, link-local or reserved address (set allowPrivateNetwork: true on the server to allow it)"
    return None


async def check_server_url(url: str, allow_private: bool) -> None:
    """Raise UrlRefused when `url` may not be connected to."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UrlRefused(f"{url!r} is not an http(s) URL with a host")
    host = parts.hostname
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise UrlRefused(f"{url!r} has an invalid port") from None
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise UrlRefused(f"host {host!r} does not resolve ({exc.strerror or exc})") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        reason = address_refusal(address, allow_private)
        if reason:
            raise UrlRefused(f"host {host!r} resolves to {address}, {reason}")
