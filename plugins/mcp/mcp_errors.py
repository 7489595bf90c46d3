"""Errors of the MCP client and the scrubber every user-facing message goes through.

A server's error text, a transport exception or a URL may carry secrets (a token in a
header echoed back, credentials in a URL, an API key in a command line); `scrub` removes
the common shapes and caps the length before anything is shown, logged or stored.
"""

from __future__ import annotations

import re

MAX_ERROR_CHARS = 400

_PATTERNS = (
    (re.compile(r"(?i)\b(bearer|basic|token)\s+[A-Za-z0-9._~+/=-]{8,}"), r"\1 [redacted]"),
    (re.compile(r"(?i)((?:api[_-]?key|access[_-]?token|secret|password|passwd|token|auth)[\"']?\s*[:=]\s*[\"']?)"
                r"[^\s\"'&,;]+"), r"\1[redacted]"),
    (re.compile(r"(?i)(https?://)[^/\s:@]+:[^/\s@]+@"), r"\1[redacted]@"),
    (re.compile(r"\b(sk|pk|ghp|gho|ghs|xox[abp])[-_][A-Za-z0-9_-]{10,}"), "[redacted]"),
)


def scrub(message: object, limit: int = MAX_ERROR_CHARS) -> str:
    text = " ".join(str(message).split())
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class McpError(Exception):
    """Base of the plugin's errors; `str()` is already scrubbed."""

    def __init__(self, message: object) -> None:
        super().__init__(scrub(message))


class McpConnectError(McpError):
    """The server could not be started, reached or initialised."""


class McpRequestError(McpError):
    """A request to a connected server failed (timeout, protocol error, dropped connection)."""


class McpServerUnavailable(McpError):
    """The server is not connected (down, disabled or removed)."""

    code = "mcp_server_unavailable"  # what hosts answer with (serve: 409)


def describe_exception(exc: BaseException) -> str:
    """A one-line scrubbed description, unwrapping exception groups to their first leaf."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc) or type(exc).__name__
    return scrub(text if isinstance(exc, McpError) else f"{type(exc).__name__}: {text}")
