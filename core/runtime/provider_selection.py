"""Build the active text provider from the registered provider kinds.

With no `llm` block in config.json, one local llama-server entry is synthesised, so a
local-only install needs no provider configuration at all.
"""

from __future__ import annotations

from typing import Any

from atomic_agent.config.app_config import AppConfig
from atomic_agent.plugin_host.collect_registrations import collect_records
from atomic_agent.plugin_host.plugin_host import PluginHost
from atomic_agent.records.provider_kind import ProviderKind

LOCAL_KIND = "llama-server"


class NoProviderError(RuntimeError):
    pass


def provider_kinds(host: PluginHost) -> dict[str, ProviderKind]:
    return {k.name: k for k in collect_records(host, "register_providers", ProviderKind)}


def active_entry(config: AppConfig) -> dict[str, Any]:
    llm = config.unknown_blocks.get("llm") if "llm" not in config.blocks else None
    if isinstance(llm, dict) and llm.get("providers"):
        active = llm.get("activeTextProvider")
        for entry in llm["providers"]:
            if isinstance(entry, dict) and (active is None or entry.get("id") == active):
                return dict(entry)
    return {"id": "local", "kind": LOCAL_KIND}


def build_active_provider(host: PluginHost, runtime: Any) -> Any:
    kinds = provider_kinds(host)
    entry = active_entry(runtime.config)
    kind = kinds.get(entry.get("kind", ""))
    if kind is None:
        known = ", ".join(sorted(kinds)) or "none (is the llama_server plugin disabled?)"
        raise NoProviderError(f"no provider kind {entry.get('kind')!r} is registered; registered kinds: {known}")
    return kind.factory(entry, runtime)
