"""The single builder of request headers, shared by chat, embeddings, model listing and the
key check, so discovery and chat can never disagree about how a vendor authenticates."""

from __future__ import annotations

from collections.abc import Mapping

from .vendor_presets import BEARER


def auth_headers(api_key: str, api_key_header: str = BEARER, static: Mapping[str, str] | None = None) -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    headers.update(static or {})
    if api_key:
        if api_key_header.lower() == BEARER.lower():
            headers[BEARER] = f"Bearer {api_key}"
        else:
            headers[api_key_header] = api_key
    return headers
