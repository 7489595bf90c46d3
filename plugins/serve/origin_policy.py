"""Who may talk to `serve`, decided from the request line and headers alone.

A server on loopback is reachable by every web page the user opens: a page can make the
browser send requests to `127.0.0.1` (a "simple" cross-origin POST needs no preflight),
and DNS rebinding can give a page's own name the address 127.0.0.1 so even its reads
succeed. So, before any route runs:

- `Host` must name this machine — exactly `localhost`, a 127/8 address or `[::1]`, each with
  an optional `:port` — or a name listed in `serve.allowedHosts` (a rebinding page arrives
  with its own name). The header is parsed strictly (`parse_host`): anything after the
  port or the `]`, userinfo, a trailing dot, shortened or numeric address spellings are
  refused with 400 rather than guessed at. With an API key the key is the boundary and
  any Host is accepted.
- `Origin`, when a browser sends one, must be the server's own origin or one listed in
  `serve.allowedOrigins`; a foreign origin, `null` (sandboxed frames, files) and
  `Sec-Fetch-Site: cross-site|same-site` without an allowed origin are refused.
- Every request body must be `application/json` (a browser cannot send that cross-origin
  without a preflight, and preflights are only answered for `serve.allowedOrigins`).

These functions are pure so the middleware, the tests and the benchmark share them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Sequence

import attrs

JSON_TYPES = ("application/json",)
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CROSS_SITE = frozenset({"cross-site", "same-site"})


@attrs.frozen
class OriginPolicy:
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    keyed: bool = False  # an API key guards every route

    @classmethod
    def of(cls, hosts: Sequence[str], origins: Sequence[str], keyed: bool) -> OriginPolicy:
        return cls(tuple(h.strip().lower().rstrip(".").strip("[]") for h in hosts if h.strip()),
                   tuple(normalise_origin(o) for o in origins if o.strip()), keyed)


@attrs.frozen
class Refusal:
    status: int
    code: str
    message: str


@attrs.frozen
class HostHeader:
    name: str  # lower-cased; an IPv6 literal without its brackets
    port: int | None
    literal: bool  # an IP address, not a name


_BRACKETED = re.compile(r"\[([0-9A-Fa-f:.]{2,45})\](?::([0-9]{1,5}))?")
_NAMED = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}"
                    r"[A-Za-z0-9])?)*)(?::([0-9]{1,5}))?")


def parse_host(host_header: str) -> HostHeader | None:
    """The Host header read strictly (RFC 9110 `uri-host [":" port]`), or None when it is not
    one: a bracketed IPv6 literal or a dotted name/IPv4 address, then at most `:` and 1-5
    ASCII digits (1-65535), and nothing else — no userinfo (`a@b`), no trailing dot, no
    empty port, no zone id, no bare IPv6, no whitespace, nothing after the `]`."""
    match = _BRACKETED.fullmatch(host_header)
    if match is not None:
        try:
            address = ipaddress.IPv6Address(match.group(1))
        except ValueError:
            return None
        port = _port(match.group(2))
        return None if port == 0 else HostHeader(str(address), port, True)
    match = _NAMED.fullmatch(host_header)
    if match is None:
        return None
    port = _port(match.group(2))
    if port == 0:
        return None
    name = match.group(1).lower()
    try:
        return HostHeader(str(ipaddress.IPv4Address(name)), port, True)
    except ValueError:
        pass
    if name.replace(".", "").isdigit() or name.startswith("0x"):  # 127.1, 2130706433, 0x7f.1: address spellings
        return None  # browsers and resolvers disagree on these; none is a name we serve
    return HostHeader(name, port, False)


def _port(text: str | None) -> int | None:
    if text is None:
        return None
    value = int(text)
    return value if 0 < value < 65536 else 0


def host_is_loopback(host: HostHeader) -> bool:
    """Exactly `localhost`, or an IP literal in the loopback range (127/8, ::1)."""
    if host.literal:
        return ipaddress.ip_address(host.name).is_loopback
    return host.name == "localhost"


def normalise_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def check_host(policy: OriginPolicy, host_header: str | None) -> Refusal | None:
    if not host_header:
        return Refusal(400, "host_required", "the request has no Host header")
    host = parse_host(host_header)
    if host is None:
        return Refusal(400, "invalid_host", f"the Host header {host_header!r} is not a host name or IP literal "
                       "with an optional :port (for example 127.0.0.1:8765, localhost, [::1]:8765)")
    if policy.keyed or host_is_loopback(host) or host.name in policy.allowed_hosts:
        return None
    return Refusal(403, "host_not_allowed",
                   f"Host {host_header!r} is not this machine; serve answers only loopback names (localhost, "
                   "127.0.0.1, [::1]) and the names in serve.allowedHosts. A web page reaching this port through "
                   "its own DNS name is refused (DNS rebinding)")


def origin_allowed(policy: OriginPolicy, origin: str, host_header: str | None) -> bool:
    wanted = normalise_origin(origin)
    if wanted in policy.allowed_origins:
        return True
    own = f"http://{host_header.strip().lower()}" if host_header else None
    return own is not None and wanted == own and check_host(policy, host_header) is None


def check_origin(policy: OriginPolicy, origin: str | None, fetch_site: str | None,
                 host_header: str | None) -> Refusal | None:
    if origin is not None:
        if origin_allowed(policy, origin, host_header):
            return None
        return Refusal(403, "origin_not_allowed",
                       f"requests from the web origin {origin!r} are refused; add it to serve.allowedOrigins if a "
                       "page you trust should drive this agent")
    if fetch_site is not None and fetch_site.strip().lower() in CROSS_SITE:
        return Refusal(403, "origin_not_allowed", "a cross-site browser request without an allowed Origin is refused")
    return None


def media_type(content_type: str | None) -> tuple[str, str | None]:
    """(type/subtype lowercased, charset or None)."""
    if not content_type:
        return "", None
    main, *params = content_type.split(";")
    charset = None
    for param in params:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset":
            charset = value.strip().strip('"').lower()
    return main.strip().lower(), charset


def check_body_type(method: str, content_type: str | None, has_body: bool) -> Refusal | None:
    if method not in BODY_METHODS or not has_body:
        return None
    kind, charset = media_type(content_type)
    if kind not in JSON_TYPES:
        shown = kind or "no Content-Type"
        return Refusal(415, "unsupported_media_type",
                       f"request bodies must be sent as Content-Type: application/json, got {shown}")
    if charset not in (None, "utf-8", "utf8"):
        return Refusal(415, "unsupported_media_type", f"JSON bodies are UTF-8; charset={charset} is not accepted")
    return None
