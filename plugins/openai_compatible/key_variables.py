"""Which environment variable holds a provider entry's API key (the entry's `apiKeyEnv`, else
its preset's), and the name a new entry gets when neither names one."""

from __future__ import annotations

import re
from typing import Any


def key_env(entry: dict[str, Any]) -> str:
    from .vendor_presets import PRESETS_BY_ID

    preset = PRESETS_BY_ID.get(str(entry.get("preset") or "custom"))
    return str(entry.get("apiKeyEnv") or (preset.api_key_env if preset else ""))


def default_key_env(provider_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", provider_id).strip("_").upper() + "_API_KEY"
