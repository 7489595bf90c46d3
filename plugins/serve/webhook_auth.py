"""A webhook call's credentials, and what identifies the delivery so it is accepted once.

Credentials (every configured one must match; secrets compared in constant time with
`hmac.compare_digest`, each computed even when its header is missing so a wrong and an
absent credential take the same path):

- shared secret: `X-Webhook-Secret: <secret>`. It proves who sent the call but not when:
  a captured call replays. Endpoints that can sign should sign.
- signature, our shape: `X-Atomic-Timestamp: <unix seconds>` and
  `X-Webhook-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. A timestamp
  older than MAX_AGE_S or more than MAX_FUTURE_S ahead is refused, and each signature is
  accepted once (remembered until its timestamp is stale, so a captured call is worthless
  once used or five minutes old). A signature of the body alone is refused: it never expires.
- signature, GitHub's shape: `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw
  body>` with `X-GitHub-Delivery: <id>`. GitHub signs no timestamp, so the delivery id and
  the signature are each remembered for good: a second call with either is refused.

What is remembered is what the server computed (the expected signature), never the
spelling the caller sent, so a replay in upper-case hex or with spaces is still a replay.
Each credential header must be sent at most once; `headers` are keyed by lower-case name.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Mapping, Sequence

import attrs

SECRET_HEADER = "X-Webhook-Secret"
SIGNATURE_HEADER = "X-Webhook-Signature"
TIMESTAMP_HEADER = "X-Atomic-Timestamp"
GITHUB_SIGNATURE_HEADER = "X-Hub-Signature-256"
GITHUB_DELIVERY_HEADER = "X-GitHub-Delivery"
CREDENTIAL_HEADERS = (SECRET_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, GITHUB_SIGNATURE_HEADER,
                      GITHUB_DELIVERY_HEADER)
SIGNATURE_PREFIX = "sha256="
MAX_AGE_S = 300
MAX_FUTURE_S = 60  # clock skew a sender may have
_TIMESTAMP = re.compile(r"[0-9]{1,12}")  # ASCII digits only: no sign, space, exponent or other scripts' digits
_DELIVERY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")

INVALID = "invalid_webhook_credentials"
STALE = "stale_webhook_timestamp"


@attrs.frozen
class WebhookCheck:
    ok: bool
    problem: str = ""  # why it was refused (names no secret)
    code: str = INVALID
    marks: tuple[str, ...] = ()  # what identifies this delivery: refused when any was seen before
    keep_until: float | None = None  # how long the marks matter; None: for good


def signature_for(key: str, raw: bytes, timestamp: str | None = None) -> str:
    """`sha256=<hex>` over `<timestamp>.<raw>` (our shape) or over `raw` alone (GitHub's shape)."""
    signed = raw if timestamp is None else timestamp.encode("ascii") + b"." + raw
    return SIGNATURE_PREFIX + hmac.new(key.encode(), signed, hashlib.sha256).hexdigest()


def _one(headers: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = headers.get(name.lower()) or ()
    return values[0].strip() if values else None


def _same(given: str | None, expected: str) -> bool:
    return hmac.compare_digest((given or "").lower().encode("latin-1", "replace"), expected.encode())


def check_credentials(headers: Mapping[str, Sequence[str]], raw: bytes, secret: str | None, hmac_key: str | None,
                      now: float) -> WebhookCheck:
    """Whether every configured credential matches; `headers` maps lower-case names to all
    the values sent. At least one credential must be configured."""
    if not secret and not hmac_key:
        return WebhookCheck(False, "this webhook has no credentials configured (secretEnv or hmacSecretEnv), so it "
                            "accepts no call")
    repeated = [name for name in CREDENTIAL_HEADERS if len(headers.get(name.lower()) or ()) > 1]
    if repeated:
        return WebhookCheck(False, f"the header {repeated[0]} was sent more than once; send each credential once")
    ok = True
    if secret:
        ok &= hmac.compare_digest((_one(headers, SECRET_HEADER) or "").encode("latin-1", "replace"), secret.encode())
    if not hmac_key:
        return WebhookCheck(ok, "" if ok else "the webhook secret is missing or wrong")
    ours, github = _one(headers, SIGNATURE_HEADER), _one(headers, GITHUB_SIGNATURE_HEADER)
    if ours is not None and github is not None:
        return WebhookCheck(False, f"send one signature: {SIGNATURE_HEADER} (with {TIMESTAMP_HEADER}) or "
                            f"{GITHUB_SIGNATURE_HEADER} (with {GITHUB_DELIVERY_HEADER}), not both")
    if github is not None:
        return _github(ok, github, _one(headers, GITHUB_DELIVERY_HEADER), raw, hmac_key)
    return _timestamped(ok, ours, _one(headers, TIMESTAMP_HEADER), raw, hmac_key, now)


def _github(ok: bool, given: str, delivery: str | None, raw: bytes, key: str) -> WebhookCheck:
    expected = signature_for(key, raw)
    ok &= _same(given, expected)
    if not ok:
        return WebhookCheck(False, "the webhook signature or secret is missing or wrong")
    if delivery is None or not _DELIVERY.fullmatch(delivery):
        return WebhookCheck(False, f"a {GITHUB_SIGNATURE_HEADER} call needs its {GITHUB_DELIVERY_HEADER} id "
                            "(1-128 letters, digits and ._-): it is how a replayed delivery is recognised")
    return WebhookCheck(True, marks=(f"github-signature:{expected}", f"github-delivery:{delivery.lower()}"))


def _timestamped(ok: bool, given: str | None, timestamp: str | None, raw: bytes, key: str, now: float
                 ) -> WebhookCheck:
    valid_ts = timestamp is not None and _TIMESTAMP.fullmatch(timestamp) is not None
    expected = signature_for(key, raw, timestamp if valid_ts else "")
    ok &= _same(given, expected)  # computed whatever the timestamp: one path for every wrong call
    recipe = (f"send {TIMESTAMP_HEADER}: <unix seconds> and {SIGNATURE_HEADER}: sha256=<hex HMAC-SHA256 of "
              "'<timestamp>.<body>'>")
    if timestamp is None:
        return WebhookCheck(False, f"the call has no {TIMESTAMP_HEADER}; {recipe} (a signature of the body alone "
                            "could be replayed forever and is not accepted)")
    if not valid_ts:
        return WebhookCheck(False, f"{TIMESTAMP_HEADER} must be the Unix time in whole seconds, ASCII digits only; "
                            f"{recipe}")
    if not ok:
        return WebhookCheck(False, "the webhook signature or secret is missing or wrong")
    at = int(timestamp)
    if at < now - MAX_AGE_S:
        return WebhookCheck(False, f"the signed timestamp is {int(now - at)} s old (the limit is {MAX_AGE_S} s); "
                            "sign the call again with the current time", STALE)
    if at > now + MAX_FUTURE_S:
        return WebhookCheck(False, f"the signed timestamp is {int(at - now)} s in the future (the limit is "
                            f"{MAX_FUTURE_S} s); check the sender's clock", STALE)
    return WebhookCheck(True, marks=(f"signature:{expected}",), keep_until=at + MAX_AGE_S + 1)
