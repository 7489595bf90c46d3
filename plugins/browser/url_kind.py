"""What kind of address the model asked the browser to open.

http and https are web addresses (the egress policy decides); `file:` and `javascript:` are
non-web (category browser_nonweb, auto-approved only at level 5, full trust); about:blank is
the empty page; every other scheme (data:, chrome:, view-source:, blob:, ...) is refused.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import attrs

WEB = "web"
NONWEB = "nonweb"
BLANK = "blank"
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_URL_CHARS = 8192


class BadUrl(ValueError):
    """The URL cannot be opened; the message says what to send instead."""


@attrs.frozen
class UrlKind:
    kind: str
    scheme: str
    host: str = ""


def classify(url: object) -> UrlKind:
    if not isinstance(url, str) or not url.strip():
        raise BadUrl("url must be a non-empty string, e.g. \"https://example.org/\"")
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise BadUrl(f"the URL is {len(url)} characters; at most {MAX_URL_CHARS}")
    if _CONTROL.search(url):
        raise BadUrl("the URL contains a control character; send a clean URL")
    if url == "about:blank":
        return UrlKind(BLANK, "about")
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme == "javascript":
        return UrlKind(NONWEB, scheme)
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        raise BadUrl(f"{url[:120]!r} is not a valid URL ({exc})") from None
    if scheme == "file":
        return UrlKind(NONWEB, scheme)
    if scheme in ("http", "https"):
        if "@" in parts.netloc:
            raise BadUrl("credentials in the URL (user@host) are not accepted; open the page and sign in with "
                         "browser.type instead")
        if not parts.hostname:
            raise BadUrl(f"{url[:120]!r} has no host")
        return UrlKind(WEB, scheme, parts.hostname.lower().rstrip("."))
    if not scheme:
        raise BadUrl(f"{url[:120]!r} has no scheme; write the full address, e.g. \"https://{url[:60]}\"")
    raise BadUrl(f"{scheme}: URLs are not opened; the browser opens http and https pages (and file: or "
                 "javascript: at full trust)")
