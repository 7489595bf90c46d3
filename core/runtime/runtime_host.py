"""What a host of one runtime (serve, the sidecar) does with it, whatever its transport:
`bind` it once it is built, reach it through `runtime`, `release` it last at shutdown.

While bound, the MCP plugin's host events (server status, drift), when that plugin is
loaded, are relayed to the host's `emit_event`, as any other event outside a turn's stream.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.runtime.runtime_view import RuntimeView


class RuntimeHost:
    """Base of a host: subclasses implement `emit_event`."""

    _runtime: RuntimeView | None = None
    _unrelay: Callable[[], None] | None = None

    def emit_event(self, event: dict[str, Any], turn_id: str | None = None) -> None:
        raise NotImplementedError

    def bind(self, runtime: RuntimeView) -> None:
        self._runtime = runtime
        mcp = runtime.service("mcp", None)  # None without the MCP plugin: nothing to relay
        self._unrelay = mcp.subscribe_host_events(self.emit_event) if mcp is not None else None

    @property
    def runtime(self) -> RuntimeView:
        if self._runtime is None:
            raise RuntimeError(f"{type(self).__name__}.bind(runtime) was not called")
        return self._runtime

    async def release(self) -> None:
        """Stop relaying and close the runtime (when one was bound): the last step of a shutdown."""
        if self._unrelay is not None:
            unrelay, self._unrelay = self._unrelay, None
            unrelay()
        if self._runtime is not None:
            await self._runtime.close()
