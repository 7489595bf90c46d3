"""Build an `openai-compatible` provider from one `llm.providers[]` entry."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .endpoint_entry import resolve_endpoint
from .openai_provider import OpenAiCompatibleProvider

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


def _cost_tracking(runtime: RuntimeView) -> bool:
    from atomic_agent.api import llm_config

    try:
        return bool(llm_config.read_llm_config(runtime.config).cost_tracking)
    except Exception:
        return True


def build_openai_provider(entry: dict[str, Any], runtime: RuntimeView) -> OpenAiCompatibleProvider:
    environ = getattr(runtime, "environ", None)
    endpoint = resolve_endpoint(entry, environ if environ is not None else os.environ)
    return OpenAiCompatibleProvider(endpoint, track_cost=_cost_tracking(runtime))
