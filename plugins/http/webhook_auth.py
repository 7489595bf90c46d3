"""A webhook call's credentials: a shared secret and/or an HMAC-SHA256 body signature, both
compared in constant time (`hmac.compare_digest`), each computed even when its header is
missing so a wrong and an absent credential take the same path."""

from __future__ import annotations

import hashlib
import hmac

SECRET_HEADER = "x-webhook-secret"
SIGNATURE_HEADER = "x-webhook-signature"
SIGNATURE_PREFIX = "sha256="


def signature_for(key: str, raw: bytes) -> str:
    return SIGNATURE_PREFIX + hmac.new(key.encode(), raw, hashlib.sha256).hexdigest()


def credentials_ok(headers: dict[str, str], raw: bytes, secret: str | None, hmac_key: str | None) -> bool:
    """True when every configured credential matches (at least one must be configured)."""
    if not secret and not hmac_key:
        return False
    ok = True
    if secret:
        ok &= hmac.compare_digest(headers.get(SECRET_HEADER, "").encode(), secret.encode())
    if hmac_key:
        ok &= hmac.compare_digest(headers.get(SIGNATURE_HEADER, "").encode(), signature_for(hmac_key, raw).encode())
    return ok
