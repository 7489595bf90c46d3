"""In-test provider kinds: scripted providers registered through the real provider hook."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from atomic_agent.api import ProviderCapabilities, ProviderKind, hookimpl
from atomic_agent.runtime.boot_context import BootContext, boot
from atomic_agent.testing.runtime_kit import fresh_plugin_host, registered_plugin
from atomic_agent.testing.scripted_provider import ScriptedProvider, calls


class KindsPlugin:
    """A plugin object whose `register_providers` returns the given kinds."""

    def __init__(self, kinds: list[ProviderKind]) -> None:
        self.kinds = kinds

    @hookimpl
    def register_providers(self) -> list[ProviderKind]:
        return self.kinds


class Built:
    """Every provider a kit kind built, by entry id (latest last)."""

    def __init__(self) -> None:
        self.by_id: dict[str, list[Any]] = {}
        self.entries: dict[str, dict[str, Any]] = {}

    def last(self, provider_id: str) -> Any:
        return self.by_id[provider_id][-1]


def scripted_kind(name: str, transport: str, built: Built,
                  make: Callable[[dict[str, Any]], ScriptedProvider] | None = None) -> ProviderKind:
    def default(entry: dict[str, Any]) -> ScriptedProvider:
        # answers "from <id>": as a grammar-shaped reply call, or as prose for native transports
        served = entry.get("toolTransport", transport)
        answer = calls(("reply", {"text": f"from {entry['id']}"})) if served == "grammar" else f"from {entry['id']}"
        return ScriptedProvider(transport=served, default=answer, slot=0 if transport == "grammar" else -1)

    def factory(entry: dict[str, Any], runtime: Any) -> ScriptedProvider:
        provider = make(entry) if make is not None else default(entry)
        built.by_id.setdefault(entry["id"], []).append(provider)
        built.entries[entry["id"]] = entry
        return provider

    capabilities = ProviderCapabilities(transport=transport, slot_affinity=transport == "grammar")
    # like the real plugin, the llama-server kind is the one registered as the default local kind
    return ProviderKind(name=name, factory=factory, capabilities=capabilities, default_local=name == "llama-server")


def write_config(state: Path, llm: dict[str, Any] | None) -> None:
    state.mkdir(parents=True, exist_ok=True)
    body: dict[str, Any] = {"version": 2}
    if llm is not None:
        body["llm"] = llm
    (state / "config.json").write_text(json.dumps(body))


@contextmanager
def booted(state: Path, llm: dict[str, Any] | None, kinds: list[ProviderKind],
           environ: dict[str, str] | None = None) -> Iterator[BootContext]:
    write_config(state, llm)
    host = fresh_plugin_host()
    with registered_plugin(host, KindsPlugin(kinds), "test_kinds"):
        yield boot(state, environ=dict(environ or {}), host=host)
