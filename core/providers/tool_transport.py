"""Which tool-call transport a provider entry uses: `grammar` (GBNF) or `native_tools`.

`auto` follows the provider kind: grammar for llama-server, native tools for the others.
The global `llm.toolTransport` applies to the active text provider; an entry may pin its
own with a `toolTransport` key (fallback links otherwise follow their kind).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from atomic_agent.providers.llm_config import TOOL_TRANSPORTS, TRANSPORT_AUTO
from atomic_agent.hook_records import ProviderKind

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
