"""The provider as one turn sees it: bound to its session, and reachable before it is built.

`session_provider` binds the runtime's provider seam to one session's breaker partition,
its event sink and its trace (a fixed provider given to the runtime is used as is).
`LazyProvider` lets the loop report the provider's `mode` and unavailable hint without
forcing the provider to be built before the first step needs it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from atomic_agent.agent import agent_events as ev
from atomic_agent.tracing.trace_recorder import TraceRecorder

if TYPE_CHECKING:
    from atomic_agent.runtime.runtime import Runtime


def session_provider(runtime: Runtime, session_id: str, emit: ev.EventSink, trace: TraceRecorder,
                     turn_index: int) -> Any:
    """The seam bound to one session's breaker partition, its event sink and its trace."""
    seam = runtime.provider
    if not hasattr(seam, "for_session"):
        return seam

    def notice(n: Any) -> None:
        emit(n.as_event())
        trace.record("provider_switched", turnIndex=turn_index, direction=n.direction, fromProvider=n.from_id,
                     toProvider=n.to_id, reason=n.reason)

    def usage(provider_id: str, completion: Any) -> None:
        if completion.usage:
            trace.record("llm_usage", turnIndex=turn_index, provider=provider_id, **completion.usage)

    return seam.for_session(session_id, notice, usage)


class LazyProvider:
    """The loop reports `mode`/hint of a provider that may not be built yet."""

    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime

    @property
    def mode(self) -> str:
        return getattr(self._runtime.provider, "mode", "unknown")

    def unavailable_hint(self) -> str:
        return self._runtime.provider.unavailable_hint()
