"""Whether a request's framing headers say one thing: where its body ends, and which host it is for.

Two parsers that read the same bytes differently (a proxy in front, uvicorn's h11 or
httptools, starlette) are how requests get smuggled: one trusts Content-Length, the other
Transfer-Encoding, and the leftover bytes become a second request nobody checked. So a
request is refused (400) unless it is unambiguous:

- Transfer-Encoding and Content-Length together;
- Transfer-Encoding that is anything but exactly one `chunked` (`gzip, chunked`,
  `chunked, chunked`, `xchunked`, two headers);
- Content-Length that is not ASCII digits, or several that differ (`5, 6`, `+5`, `0x5`);
- more than one Host header.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from atomic_agent.plugins.serve.origin_policy import Refusal

_DIGITS = re.compile(rb"[0-9]{1,18}")


def framing_refusal(headers: Sequence[tuple[bytes, bytes]]) -> Refusal | None:
    """Why these raw ASGI headers frame the request ambiguously, or None."""
    lengths = [v.strip() for k, v in headers if k.lower() == b"content-length"]
    encodings = [v.strip() for k, v in headers if k.lower() == b"transfer-encoding"]
    hosts = [v for k, v in headers if k.lower() == b"host"]
    if len(hosts) > 1:
        return _bad("the request has more than one Host header")
    if encodings and lengths:
        return _bad("the request has both Transfer-Encoding and Content-Length; send one of them")
    if encodings and (len(encodings) > 1 or encodings[0].lower() != b"chunked"):
        shown = ", ".join(e.decode("latin-1") for e in encodings)
        return _bad(f"Transfer-Encoding must be exactly 'chunked', got {shown!r}")
    if any(not _DIGITS.fullmatch(length) for length in lengths):
        return _bad("Content-Length must be one decimal number")
    if len({int(length) for length in lengths}) > 1:
        return _bad("the request has several different Content-Length values")
    return None


def _bad(message: str) -> Refusal:
    return Refusal(400, "ambiguous_framing", message)
