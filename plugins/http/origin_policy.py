"""Who may talk to `serve`, decided from the request line and headers alone.

A server on loopback is reachable by every web page the user opens: a page can make the
browser send requests to `127.0.0.1` (a "simple" cross-origin POST needs no preflight),
and DNS rebinding can give a page's own name the address 127.0.0.1 so even its reads
succeed. So, before any route runs:

- `Host` must name this machine — `localhost`, `127.0.0.1`, `[::1]` and the other loopback
  spellings — or a name listed in `serve.allowedHosts` (a rebinding page arrives with its
  own name). With an API key the key is the boundary and any Host is accepted.
- `Origin`, when a browser sends one, must be the server's own origin or one listed in
  `serve.allowedOrigins`; a foreign origin, `null` (sandboxed frames, files) and
  `Sec-Fetch-Site: cross-site|same-site` without an allowed origin are refused.
- Every request body must be `application/json` (a browser cannot send that cross-origin
  without a preflight, and preflights are only answered for `serve.allowedOrigins`).

These functions are pure so the middleware, the tests and the benchmark share them.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from atomic_agent.plugins.http.bind_policy import is_loopback

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
        return cls(tuple(h.strip().lower().rstrip(".") for h in hosts if h.strip()),
                   tuple(normalise_origin(o) for o in origins if o.strip()), keyed)


@attrs.frozen
class Refusal:
    status: int
    code: str
    message: str


def host_name(host_header: str) -> str:
    """The name part of a Host header: `[::1]:8765` -> `::1`, `Localhost.:80` -> `localhost`."""
    value = host_header.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def normalise_origin(origin: str) -> str:
    return origin.strip().rstrip("/").lower()


def check_host(policy: OriginPolicy, host_header: str | None) -> Refusal | None:
    if policy.keyed:
        return None
    if not host_header:
        return Refusal(400, "host_required", "the request has no Host header")
    name = host_name(host_header)
    if is_loopback(name) or name in policy.allowed_hosts:
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
