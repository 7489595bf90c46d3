"""Which llama-server slot a memory sub-call (reflection, link generator) rides.

The provider's reserved background slot when it has one that is not the session's main
slot. Otherwise -1 (the server picks), which on a single-slot server is the main slot
itself: its cached prefix is evicted and the next turn re-reads its whole prompt. That
fallback is never silent: every call that takes it is counted under
`agent.memory.background_slot.fallback` with its reason, so `memory status` and the
metrics show a server that needs `--parallel 2` (the managed server's default).
"""

from __future__ import annotations

from typing import Any

from atomic_agent.api import slot_affinity

ANY_SLOT = -1
FALLBACK_METRIC = "agent.memory.background_slot.fallback"
RESERVED_METRIC = "agent.memory.background_slot.reserved"


def background_slot(provider: Any, session_id: str, caller: str, metrics: Any = None) -> int:
    slots = slot_affinity(provider)
    slot = slots.reflection_slot() if slots is not None else ANY_SLOT
    valid = isinstance(slot, int) and not isinstance(slot, bool) and slot >= 0
    main = slots.slot_for(session_id) if slots is not None else ANY_SLOT
    if valid and slot != main:
        if metrics is not None:
            metrics.inc(RESERVED_METRIC, caller=caller)
        return int(slot)
    if metrics is not None:
        if slots is None:
            reason = "no_slots"  # a provider without slots (hosted API): nothing to evict
        elif valid:
            reason = "equals_main"
        else:
            reason = "single_slot" if main >= 0 else "slots_unknown"
        metrics.inc(FALLBACK_METRIC, caller=caller, reason=reason)
    return ANY_SLOT
