"""Vendor error answers as ProviderErrors: status, the vendor's own message, Retry-After."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from email.utils import parsedate_to_datetime
from typing import Any

from atomic_agent.api import ProviderError, ProviderUnavailableError


class OpenAiHttpError(ProviderError):
    """A failed request. `timed_out` marks our own read timeout (status None), which the
    fallback chain treats as weak evidence; `retry_after_s` is the vendor's Retry-After."""

    def __init__(self, message: str, status: int | None = None, url: str | None = None, body: object = None,
                 error_type: str | None = None, retry_after_s: float | None = None, timed_out: bool = False) -> None:
        super().__init__(message, status=status, url=url, body=body, error_type=error_type, timed_out=timed_out)
        self.retry_after_s = retry_after_s


class OpenAiUnavailableError(OpenAiHttpError, ProviderUnavailableError):
    """Nothing answered (connection refused, DNS), or the vendor said 503."""


def parse_retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms`, or `Retry-After` as seconds or an HTTP date."""
    lowered = {k.lower(): v for k, v in headers.items()}
    ms = lowered.get("retry-after-ms")
    if ms:
        try:
            return max(float(ms) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None
    return max(when - (time.time() if now is None else now), 0.0)


def _vendor_message(body: Any) -> tuple[str, str | None]:
    """(message, error type) from the shapes vendors use: {error: {message, type|code}},
    {message}, {detail}, and Gemini's one-element list."""
    if isinstance(body, list) and body:
        body = body[0]
    if not isinstance(body, dict):
        return (str(body).strip()[:300] if body else "empty body"), None
    error = body.get("error", body)
    if isinstance(error, dict):
        message = error.get("message") or error.get("detail") or body.get("detail") or ""
        kind = error.get("type") or error.get("code") or error.get("status")
        return str(message).strip()[:500] or "no message", (str(kind) if kind is not None else None)
    return str(error).strip()[:500], None


def error_from_response(status: int, url: str, text: str, headers: Mapping[str, str],
                        provider_id: str = "") -> OpenAiHttpError:
    try:
        body: object = json.loads(text) if text else None
    except ValueError:
        body = text
    message, kind = _vendor_message(body)
    who = f"provider {provider_id!r}" if provider_id else "the provider"
    cls = OpenAiUnavailableError if status == 503 else OpenAiHttpError
    return cls(f"{who} at {url} answered HTTP {status}{f' ({kind})' if kind else ''}: {message}", status=status,
               url=url, body=body, error_type=kind, retry_after_s=parse_retry_after(headers))


def network_error(exc: BaseException, url: str, provider_id: str = "") -> OpenAiHttpError:
    import httpx

    who = f"provider {provider_id!r}" if provider_id else "the provider"
    reason = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    if isinstance(exc, (httpx.ConnectError, httpx.ConnectTimeout)):
        return OpenAiUnavailableError(f"cannot reach {who} at {url} ({reason})", status=None, url=url)
    if isinstance(exc, httpx.TimeoutException):
        return OpenAiHttpError(f"{who} at {url} did not answer in time ({reason})", status=None, url=url,
                               timed_out=True)
    return OpenAiHttpError(f"request to {who} at {url} failed ({reason})", status=None, url=url)
