"""verify_provider_key: one `max_tokens: 1` completion, classified, before anything is saved.

The probe is a single request, deliberately outside the retry policy: a key check must
not spend the retry budget. Cancellation is sampled before the request and when it
fails; an answer that already arrived is classified as usual, and callers re-check their
own cancel flag afterwards before acting on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import attrs

from .auth_headers import auth_headers
from .openrouter_catalog import cheapest_paid_model
from .vendor_presets import BEARER
from .verify_classification import classify_verify_response, is_blocking_verify_status

DEFAULT_TIMEOUT_S = 20.0


@attrs.frozen
class VerifyTarget:
    base_url: str
    model: str
    api_key: str = attrs.field(repr=False, default="")
    api_key_header: str = BEARER
    headers: Mapping[str, str] = attrs.field(factory=dict)
    preset: str = "custom"


@attrs.frozen
class VerifyVerdict:
    status: str
    detail: str = ""
    http_status: int | None = None
    model: str = ""

    @property
    def blocking(self) -> bool:
        return is_blocking_verify_status(self.status)


def probe_model(target: VerifyTarget) -> str:
    return cheapest_paid_model().id if target.preset == "openrouter" else target.model


def _detail(text: str) -> str:
    return " ".join(text.split())[:300]


async def verify_provider_key(target: VerifyTarget, *, cancelled: asyncio.Event | None = None,
                              timeout_s: float = DEFAULT_TIMEOUT_S, transport: Any = None) -> VerifyVerdict:
    import httpx

    model = probe_model(target)
    if cancelled is not None and cancelled.is_set():
        return VerifyVerdict("cancelled", "the check was cancelled before it started", model=model)
    url = target.base_url.rstrip("/") + "/chat/completions"
    body = {"model": model, "messages": [{"role": "user", "content": "ping"}], "max_tokens": 1, "stream": False}
    headers = auth_headers(target.api_key, target.api_key_header, target.headers)
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s), transport=transport) as http:
            response = await http.post(url, json=body, headers=headers)
    except httpx.TimeoutException as exc:
        if cancelled is not None and cancelled.is_set():
            return VerifyVerdict("cancelled", "the check was cancelled", model=model)
        return VerifyVerdict("timeout", f"no answer from {url} within {timeout_s:g}s ({type(exc).__name__})",
                             model=model)
    except httpx.HTTPError as exc:
        if cancelled is not None and cancelled.is_set():
            return VerifyVerdict("cancelled", "the check was cancelled", model=model)
        return VerifyVerdict("unreachable", f"cannot reach {url} ({type(exc).__name__}: {exc})", model=model)
    status = classify_verify_response(response.status_code, response.text)
    detail = "the key works" if status == "ok" else _detail(response.text)
    return VerifyVerdict(status, detail, response.status_code, model)
