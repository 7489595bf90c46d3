"""One `openai-compatible` provider entry, checked and merged with its vendor preset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from .vendor_presets import BEARER, PRESETS_BY_ID, preset_named

TOOL_CHOICES = ("auto", "required", "none")
ALLOWED_KEYS = frozenset({
    "id", "kind", "label", "preset", "baseUrl", "model", "apiKeyEnv", "apiKeyHeader", "headers", "maxTokens",
    "temperature", "timeoutS", "retries", "retryMaxWaitS", "toolChoice", "assistantPrefill", "stream",
    "contextWindow", "pricing", "extraBody", "embeddingModel", "toolTransport", "vision",
})


class EntryError(ValueError):
    """An openai-compatible entry is incomplete or has a wrong value; the message says which."""


@attrs.frozen
class Pricing:
    """USD per million tokens."""

    prompt_per_m: float
    completion_per_m: float
    cached_prompt_per_m: float | None = None


@attrs.frozen
class Endpoint:
    provider_id: str
    base_url: str
    model: str
    api_key: str = attrs.field(repr=False)  # never printed, never logged
    api_key_env: str = ""
    api_key_header: str = BEARER
    headers: Mapping[str, str] = attrs.field(factory=dict)
    preset: str = "custom"
    local: bool = False
    max_tokens: int = 1024
    temperature: float | None = None
    timeout_s: float = 120.0
    retries: int = 2
    retry_max_wait_s: float = 30.0
    tool_choice: str = "auto"
    assistant_prefill: str = ""
    stream: bool = True
    context_window: int | None = None
    pricing: Pricing | None = None
    extra_body: Mapping[str, Any] = attrs.field(factory=dict)
    embedding_model: str = ""
    transport: str = "native_tools"
    vision: bool | None = None  # the entry's `vision` (the model takes images); None: not said

    def url(self, path: str) -> str:
        return self.base_url + "/" + path.lstrip("/")


def _number(entry: Mapping[str, Any], key: str, default: Any, lo: float, hi: float, *, integer: bool = False) -> Any:
    value = entry.get(key, default)
    if value is None:
        return default
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and lo <= value <= hi
    if not ok or (integer and not isinstance(value, int)):
        raise EntryError(f"provider {entry.get('id')!r}: `{key}` must be {'a whole number' if integer else 'a number'} "
                         f"in {lo}..{hi}, got {value!r}")
    return value


def _text(entry: Mapping[str, Any], key: str, default: str = "") -> str:
    value = entry.get(key, default)
    if value is None:
        return default
    if not isinstance(value, str):
        raise EntryError(f"provider {entry.get('id')!r}: `{key}` must be a string, got {value!r}")
    return value


def _string_map(entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise EntryError(f"provider {entry.get('id')!r}: `{key}` must be an object of string values")
    return dict(value)


def _pricing(entry: Mapping[str, Any]) -> Pricing | None:
    raw = entry.get("pricing")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise EntryError(f"provider {entry.get('id')!r}: `pricing` must be "
                         '{"promptPerM": USD, "completionPerM": USD} (per million tokens)')
    values = {k: _number(raw, k, None, 0, 1e6) for k in ("promptPerM", "completionPerM", "cachedPromptPerM")}
    if values["promptPerM"] is None or values["completionPerM"] is None:
        raise EntryError(f"provider {entry.get('id')!r}: `pricing` needs both promptPerM and completionPerM")
    return Pricing(float(values["promptPerM"]), float(values["completionPerM"]),
                   None if values["cachedPromptPerM"] is None else float(values["cachedPromptPerM"]))


def resolve_endpoint(entry: Mapping[str, Any], environ: Mapping[str, str]) -> Endpoint:
    """The endpoint an entry describes. The API key is read from `environ` (which holds the
    state dir's `.env` too) under the entry's `apiKeyEnv`, defaulting to the preset's."""
    pid = str(entry.get("id") or "?")
    unknown = sorted(set(entry) - ALLOWED_KEYS)
    if unknown:
        raise EntryError(f"provider {pid!r}: unknown key(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(sorted(ALLOWED_KEYS))}")
    preset_id = _text(entry, "preset", "custom") or "custom"
    if preset_id not in PRESETS_BY_ID:
        raise EntryError(f"provider {pid!r}: unknown preset {preset_id!r}; presets: {', '.join(PRESETS_BY_ID)}")
    preset = preset_named(preset_id)
    base_url = (_text(entry, "baseUrl") or preset.base_url).rstrip("/")
    if not base_url.startswith(("http://", "https://")):
        raise EntryError(f"provider {pid!r}: `baseUrl` must be an http(s) URL such as https://host/v1 "
                         f"(preset {preset_id!r} has none); got {base_url!r}")
    model = _text(entry, "model") or preset.default_model
    if not model:
        raise EntryError(f"provider {pid!r}: `model` is required (preset {preset_id!r} has no default)")
    key_env = _text(entry, "apiKeyEnv") or preset.api_key_env
    api_key = (environ.get(key_env) or "").strip() if key_env else ""
    if not api_key and not preset.local and key_env:
        raise EntryError(f"provider {pid!r} needs an API key in ${key_env}; set it in the environment or with "
                         f"`atomic-agent providers key {pid}` (key on stdin, kept in the state dir's .env, 0600)")
    tool_choice = _text(entry, "toolChoice", "auto")
    if tool_choice not in TOOL_CHOICES:
        raise EntryError(f"provider {pid!r}: `toolChoice` must be one of {', '.join(TOOL_CHOICES)}; "
                         f"got {tool_choice!r}")
    stream = entry.get("stream", True)
    if not isinstance(stream, bool):
        raise EntryError(f"provider {pid!r}: `stream` must be true or false")
    extra = entry.get("extraBody") or {}
    if not isinstance(extra, Mapping):
        raise EntryError(f"provider {pid!r}: `extraBody` must be an object merged into every request body")
    temperature = _number(entry, "temperature", None, 0, 5)
    window = _number(entry, "contextWindow", None, 128, 100_000_000, integer=True)
    vision = entry.get("vision")
    if vision is not None and not isinstance(vision, bool):
        raise EntryError(f"provider {pid!r}: `vision` must be true (the model takes images) or false")
    return Endpoint(
        provider_id=pid, base_url=base_url, model=model, api_key=api_key, api_key_env=key_env,
        api_key_header=_text(entry, "apiKeyHeader") or preset.api_key_header,
        headers={**preset.headers, **_string_map(entry, "headers")}, preset=preset_id, local=preset.local,
        max_tokens=_number(entry, "maxTokens", 1024, 1, 1_048_576, integer=True),
        temperature=None if temperature is None else float(temperature),
        timeout_s=float(_number(entry, "timeoutS", 120, 1, 86_400)),
        retries=_number(entry, "retries", 2, 0, 10, integer=True),
        retry_max_wait_s=float(_number(entry, "retryMaxWaitS", 30, 0, 3600)),
        tool_choice=tool_choice, assistant_prefill=_text(entry, "assistantPrefill"), stream=stream,
        context_window=window, pricing=_pricing(entry), extra_body=dict(extra),
        embedding_model=_text(entry, "embeddingModel"), transport=_text(entry, "toolTransport", "native_tools"),
        vision=vision)
