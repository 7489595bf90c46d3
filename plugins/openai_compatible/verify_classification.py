"""What a key-check answer means. Status codes alone do not settle it: prepaid services
answer 401/403 once credit runs out, OpenAI says 429 `insufficient_quota` for spent
credit, Gemini answers 400 for a bad key. So the body is read for billing wording
first, then for key wording, and only then does the status decide."""

from __future__ import annotations

VERIFY_STATUSES = ("ok", "invalid_key", "no_balance", "model_unavailable", "rate_limited", "unreachable",
                   "timeout", "provider_error", "cancelled")
BLOCKING_STATUSES = frozenset({"invalid_key", "no_balance"})

BILLING_WORDING = (
    "insufficient_quota", "insufficient credit", "insufficient balance", "insufficient funds",
    "credit balance is too low", "exceeded your current quota", "out of credits", "run out of credits",
    "no credits", "payment required", "billing", "recharge", "top up your", "negative balance",
)
KEY_WORDING = (
    "invalid api key", "incorrect api key", "invalid_api_key", "api key not valid", "api_key_invalid",
    "api key is invalid", "invalid x-api-key", "no auth credentials", "authentication_error",
    "authentication failed", "invalid authentication", "unauthorized", "unauthenticated", "user not found",
    "invalid token", "missing api key", "no api key",
)
MODEL_WORDING = (
    "model_not_found", "model not found", "does not exist", "not a valid model", "no such model", "unknown model",
    "no endpoints found", "is not supported", "invalid model",
)


def classify_verify_response(status: int, body: str) -> str:
    """One of VERIFY_STATUSES for an HTTP answer to the one-token probe."""
    if 200 <= status < 300:
        return "ok"
    text = (body or "").lower()
    if any(w in text for w in BILLING_WORDING):
        return "no_balance"
    if any(w in text for w in KEY_WORDING):
        return "invalid_key"
    if status in (400, 404, 422) and any(w in text for w in MODEL_WORDING):
        return "model_unavailable"
    if status in (401, 403):
        return "invalid_key"
    if status == 402:
        return "no_balance"
    if status == 404:
        return "model_unavailable"
    if status == 429:
        return "rate_limited"
    if status in (408, 504):
        return "timeout"
    return "provider_error"


def is_blocking_verify_status(status: str) -> bool:
    """Only a rejected key and spent credit stop a save; anything else saves and reports,
    so an offline machine stays configurable."""
    return status in BLOCKING_STATUSES
