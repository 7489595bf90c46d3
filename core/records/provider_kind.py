"""What a provider plugin registers: a kind of LLM backend and how to build one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs


@attrs.frozen
class ProviderCapabilities:
    """What the agent loop may rely on for providers of this kind."""

    transport: str  # "grammar" (GBNF on /completion) | "native_tools" (OpenAI tools)
    slot_affinity: bool = False  # fixed slot ids keep a KV cache per session
    vision: bool = False
    embeddings: bool = False


@attrs.frozen
class ProviderKind:
    """A provider kind. `factory(entry, runtime)` builds a provider from one config entry.

    `entry` is the provider's config mapping (`llm.providers[]` item, or the synthesised
    local entry); `runtime` is the RuntimeView. The returned object implements the
    provider protocol in :mod:`atomic_agent.llm.provider_protocol`.

    `default_local` marks the kind a config without `llm.providers` runs on (one entry
    `{"id": "local", "kind": <it>}` is synthesised) and whose entries are the fallback
    chain's local last resort; at most one installed kind may claim it.
    """

    name: str
    factory: Callable[[dict[str, Any], Any], Any]
    capabilities: ProviderCapabilities
    summary: str = ""
    plugin: str = ""
    default_local: bool = False
