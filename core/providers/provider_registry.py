"""ProviderRegistry: provider kinds from plugins, entries from `llm.providers`, built by id.

Instances are built lazily and cached per id; `set_active(id)` switches the active text
provider without a restart and closes the one it replaces. No provider kind is named
here: the kind registered with `default_local` (llama-server, by its plugin) is the one a
config without providers runs on, so a local-only install works with no configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from atomic_agent.hook_records import ProviderKind
from atomic_agent.providers.llm_config import TOOL_TRANSPORTS, TRANSPORT_AUTO, LlmConfig

# Which tool-call transport a provider entry uses: `grammar` (GBNF) or `native_tools`.
#
# `auto` follows the provider kind: grammar for llama-server, native tools for the others.
# The global `llm.toolTransport` applies to the active text provider; an entry may pin its
# own with a `toolTransport` key (fallback links otherwise follow their kind).

ENTRY_KEY = "toolTransport"


class ToolTransportError(ValueError):
    """An entry asks for a transport its provider kind cannot speak, or an unknown one."""


def resolve_tool_transport(kind: ProviderKind, entry: Mapping[str, Any], global_setting: str = TRANSPORT_AUTO,
                           *, is_active: bool = False) -> str:
    own = entry.get(ENTRY_KEY)
    if own is not None and own not in TOOL_TRANSPORTS:
        raise ToolTransportError(f"provider {entry.get('id')!r}: toolTransport must be one of "
                                 f"{', '.join(TOOL_TRANSPORTS)}; got {own!r}")
    if own not in (None, TRANSPORT_AUTO):
        return str(own)
    if is_active and global_setting != TRANSPORT_AUTO:
        return global_setting
    return kind.capabilities.transport


LOCAL_ID = "local"


class ProviderConfigError(ValueError):
    """A provider entry cannot be built: unknown id or kind, or a transport its kind lacks."""


def default_local_kind(kinds: Mapping[str, ProviderKind]) -> str | None:
    """The name of the kind registered with `default_local`, if a plugin registers one."""
    claimed = sorted(kind.name for kind in kinds.values() if kind.default_local)
    if len(claimed) > 1:
        raise ProviderConfigError(f"provider kinds {', '.join(repr(n) for n in claimed)} all claim to be the "
                                  "default local kind; disable all but one of their plugins in plugins.disabled")
    return claimed[0] if claimed else None


def configured_entries(llm: LlmConfig, local_kind: str | None) -> tuple[list[dict[str, Any]], str]:
    """(entries, active id). No configured providers means one synthesised local entry."""
    entries = [dict(e) for e in llm.providers]
    if not entries:
        if local_kind is None:
            raise ProviderConfigError("llm.providers is empty and no installed plugin offers a default local "
                                      "provider (is the llama_server plugin disabled?); add a provider entry "
                                      "or enable that plugin")
        return [{"id": LOCAL_ID, "kind": local_kind}], LOCAL_ID
    return entries, llm.active_text_provider or entries[0]["id"]


class ProviderRegistry:
    def __init__(self, kinds: Mapping[str, ProviderKind], llm: LlmConfig, runtime: Any) -> None:
        self.kinds = dict(kinds)
        self.llm = llm
        self.runtime = runtime
        self.local_kind = default_local_kind(self.kinds)
        entries, active = configured_entries(llm, self.local_kind)
        self._entries: dict[str, dict[str, Any]] = {e["id"]: e for e in entries}
        self._order = [e["id"] for e in entries]
        self._active = active
        self._built: dict[str, Any] = {}
        self._listeners: list[Callable[[str], None]] = []

    # -- entries ------------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        return list(self._order)

    @property
    def active_id(self) -> str:
        return self._active

    def entry(self, provider_id: str) -> dict[str, Any]:
        try:
            return dict(self._entries[provider_id])
        except KeyError:
            raise ProviderConfigError(f"no provider with id {provider_id!r} is configured; "
                                      f"configured: {', '.join(self._order)}") from None

    def kind_of(self, provider_id: str) -> ProviderKind:
        entry = self.entry(provider_id)
        kind = self.kinds.get(entry["kind"])
        if kind is None:
            known = ", ".join(sorted(self.kinds)) or "none (are the provider plugins disabled?)"
            raise ProviderConfigError(f"provider {provider_id!r} has kind {entry['kind']!r}, which no plugin "
                                      f"registers; registered kinds: {known}")
        return kind

    def transport_for(self, provider_id: str) -> str:
        try:
            return resolve_tool_transport(self.kind_of(provider_id), self.entry(provider_id), self.llm.tool_transport,
                                          is_active=provider_id == self._active)
        except ToolTransportError as exc:
            raise ProviderConfigError(str(exc)) from None

    def local_id(self) -> str | None:
        """The first configured entry of the default local kind (the `appendLocal` last resort), if any."""
        return next((pid for pid in self._order if self._entries[pid]["kind"] == self.local_kind), None)

    # -- instances ----------------------------------------------------------------------------
    def get(self, provider_id: str) -> Any:
        """The built provider for `provider_id` (built on first use, then cached)."""
        built = self._built.get(provider_id)
        if built is None:
            built = self._build(provider_id)
            self._built[provider_id] = built
        return built

    def active_text(self) -> Any:
        return self.get(self._active)

    def _build(self, provider_id: str) -> Any:
        kind = self.kind_of(provider_id)
        transport = self.transport_for(provider_id)
        provider = kind.factory({**self.entry(provider_id), ENTRY_KEY: transport}, self.runtime)
        served = getattr(getattr(provider, "capabilities", None), "transport", None)
        if served != transport:
            raise ProviderConfigError(f"provider {provider_id!r} (kind {kind.name!r}) cannot use toolTransport "
                                      f"{transport!r}; it speaks {served!r}. Set llm.toolTransport to \"auto\" "
                                      f"or choose another provider")
        return provider

    def on_active_changed(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    async def set_active(self, provider_id: str) -> None:
        """Switch the active text provider; the replaced one is closed (rebuilt if used again)."""
        self.entry(provider_id)  # unknown ids fail before anything changes
        self.kind_of(provider_id)
        if provider_id == self._active:
            return
        previous, self._active = self._active, provider_id
        # the global toolTransport follows the active provider, so both ends rebuild
        stale = [p for p in (self._built.pop(previous, None), self._built.pop(provider_id, None)) if p is not None]
        for listener in self._listeners:
            listener(provider_id)
        for provider in stale:
            await provider.close()

    swap_active = set_active

    async def close(self) -> None:
        built, self._built = list(self._built.values()), {}
        for provider in built:
            await provider.close()
