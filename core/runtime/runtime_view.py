"""What hooks receive as `runtime`: config, state dir and shared services."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from atomic_agent.config.app_config import AppConfig


@runtime_checkable
class RuntimeView(Protocol):
    """The read-only face of the runtime a plugin sees during registration and lifecycle."""

    @property
    def config(self) -> AppConfig: ...

    @property
    def state_dir(self) -> Path: ...

    def service(self, name: str) -> Any:
        """A shared service by name (e.g. "sessions", "approval_gate"); KeyError if absent."""
        ...

    def provide_service(self, name: str, value: Any) -> None:
        """Publish a shared object under `name` (once per name), e.g. from `runtime_started`."""
        ...
