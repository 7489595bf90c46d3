"""Which slot a reflection call uses: the provider's reserved background slot, never the
session's main slot (whose KV cache holds the agent's stable prefix)."""

from __future__ import annotations

from typing import Any

ANY_SLOT = -1


def reflection_slot_for(provider: Any, session_id: str) -> int:
    """`provider.reflection_slot()` when it has one, else -1 (server's choice). A reserved
    slot that equals the session's main slot is refused in favour of -1."""
    pick = getattr(provider, "reflection_slot", None)
    slot = pick() if callable(pick) else ANY_SLOT
    if not isinstance(slot, int) or isinstance(slot, bool) or slot < 0:
        return ANY_SLOT
    main = provider.slot_for(session_id) if hasattr(provider, "slot_for") else ANY_SLOT
    return ANY_SLOT if slot == main else slot
