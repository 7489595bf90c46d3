"""The SSRF guard: where may an HTTP request from a tool go?

It is not part of the approval gate and stays on at every level. The host is resolved
once and every resolved address must be public; the request then connects to exactly
those checked addresses, so a second DNS answer (rebinding) cannot move it. Checking
the URL's host string instead would be bypassed: the system resolver reads `127.1`,
`0177.0.0.1`, `0x7f000001` and `2130706433` as loopback while `ipaddress` rejects those
spellings. The user opts a host in through `http.privateHosts`: a name matches the URL
host, an address or CIDR entry matches the resolved addresses.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Awaitable, Callable, Sequence

import attrs

IpAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[list[str]]]

METADATA_ADDRESSES = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254", "192.0.0.192"))
_CGNAT = ipaddress.ip_network("100.64.0.0/10")
_BAD_URL_CHARS = re.compile(r"[\s\\\x00-\x1f\x7f]")


class SsrfBlocked(Exception):
    """The request may not go there; the message names the host, address and the fix."""


@attrs.frozen
class CheckedTarget:
    parts: "UrlParts"
    addresses: tuple[str, ...]  # the checked addresses to connect to, resolver order

    @property
    def host(self) -> str:
        return self.parts.host


def normalise_host(host: str) -> str:
    return host.strip().strip("[]").rstrip(".").lower()


def blocked_reason(address: IpAddress) -> str | None:
    """Why a resolved address is off-limits (None for a public address)."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address in METADATA_ADDRESSES:
        return "a cloud metadata address"
    if address.is_loopback:
        return "loopback"
    if address.is_unspecified:
        return "the unspecified address (reaches this machine)"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "carrier-grade NAT (shared address space)"
    if address.is_private:
        return "a private network"
    if not address.is_global or address.is_reserved:
        return "a reserved, non-public address"
    return None


def _entry_matches(entry: str, host: str, address: IpAddress) -> bool:
    entry = normalise_host(entry)
    if not entry:
        return False
    try:
        network = ipaddress.ip_network(entry, strict=False)
    except ValueError:
        if entry.startswith("*."):
            return host.endswith(entry[1:])
        return host == entry
    candidates = [address]
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        candidates.append(address.ipv4_mapped)
    return any(c.version == network.version and c in network for c in candidates)


def host_allowed_private(host: str, address: IpAddress, private_hosts: Sequence[str]) -> bool:
    return any(_entry_matches(entry, host, address) for entry in private_hosts)


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for info in infos:
        addr = str(info[4][0]).split("%", 1)[0]
        if addr not in seen:
            seen.append(addr)
    return seen


@attrs.frozen
class UrlParts:
    scheme: str
    host: str
    port: int
    target: str  # path + query, what goes on the request line

    def pinned(self, address: str) -> str:
        """The URL with the host replaced by a checked address (the Host header keeps the name)."""
        shown = f"[{address}]" if ":" in address else address
        return f"{self.scheme}://{shown}:{self.port}{self.target}"

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        default = 443 if self.scheme == "https" else 80
        return host if self.port == default else f"{host}:{self.port}"


def split_url(url: str) -> UrlParts:
    """The parts of an http(s) URL; SsrfBlocked for anything else.

    Parsed with the stdlib (which keeps `0177.0.0.1` as the resolver will read it); the
    request itself goes to the checked address, so no second parser decides the host.
    """
    from urllib.parse import urlsplit

    if not isinstance(url, str) or _BAD_URL_CHARS.search(url):
        raise SsrfBlocked("the URL contains whitespace, a backslash or a control character; send a clean URL")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise SsrfBlocked(f"{url!r:.120} is not a valid URL ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise SsrfBlocked(f"only http and https URLs may be requested, not {scheme or 'scheme-less'}: URLs")
    if "@" in parts.netloc:
        raise SsrfBlocked("credentials in the URL (user@host) are not accepted; send an Authorization header instead")
    host = normalise_host(parts.hostname or "")
    if not host:
        raise SsrfBlocked(f"{url!r:.120} has no host")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return UrlParts(scheme, host, port or (443 if scheme == "https" else 80), target)


async def check_url(url: str, private_hosts: Sequence[str] = (), resolver: Resolver | None = None) -> CheckedTarget:
    """Resolve the URL's host and return the addresses it may connect to, or raise SsrfBlocked."""
    parts = split_url(url)
    host, port = parts.host, parts.port
    resolve = resolver or system_resolver
    try:
        addresses = await resolve(host, port)
    except (OSError, UnicodeError) as exc:
        raise SsrfBlocked(f"cannot resolve {host!r} ({exc}); check the host name") from None
    if not addresses:
        raise SsrfBlocked(f"{host!r} resolves to no address")
    for text in addresses:
        try:
            address = ipaddress.ip_address(text)
        except ValueError:
            raise SsrfBlocked(f"{host!r} resolved to {text!r}, which is not an IP address") from None
        reason = blocked_reason(address)
        if reason and not host_allowed_private(host, address, private_hosts):
            raise SsrfBlocked(
                f"{host!r} resolves to {address} ({reason}); tools may not reach it. If you trust it, add "
                f"\"{host}\" (or the address) to http.privateHosts in config.json")
    return CheckedTarget(parts, tuple(addresses))
