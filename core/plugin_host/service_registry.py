"""The services plugins provide to each other: one owner per name, built lazily, failures
isolated.

A name two plugins provide is used by neither: asking for it raises an error naming both,
and both plugins' `atomic-agent plugins` rows say so. A factory that raises is reported
once and its service stays unavailable (every later ask gets the same error) — the rest of
the runtime keeps working.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable
from typing import Any

from atomic_agent.hook_records import ServiceSpec
from atomic_agent.plugin_host.collect_registrations import records_by_plugin, report_failure
from atomic_agent.plugin_host.plugin_host import PluginHost

CORE_OWNER = "core"
# what `Runtime.service` answers itself; no plugin may provide these names
CORE_SERVICES = ("state_dir", "prompt_assets", "approval_gate", "turn_controller", "tool_registry", "sessions")


class ServiceNotFoundError(KeyError):
    """No plugin provides the service (or its provider failed to register)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class ServiceConflictError(ServiceNotFoundError):
    """Two or more plugins provide the name, so none of them is used."""


class ServiceUnavailableError(RuntimeError):
    """The provider's factory raised; the service is not available in this runtime."""


class ServiceRegistry:
    """Collects `register_services` once; `get(name, runtime)` builds on first use."""

    def __init__(self, host: PluginHost, reserved: Iterable[str] = CORE_SERVICES) -> None:
        self._host = host
        providers: dict[str, list[ServiceSpec]] = {}
        for name in reserved:
            providers[name] = [ServiceSpec(name, factory=lambda runtime: None, plugin=CORE_OWNER)]
        for _, specs in records_by_plugin(host, "register_services", ServiceSpec):
            for spec in specs:
                providers.setdefault(spec.name, []).append(spec)
        self._specs: dict[str, ServiceSpec] = {}
        self.conflicts: dict[str, tuple[str, ...]] = {}
        for name, specs in sorted(providers.items()):
            owners = tuple(spec.plugin for spec in specs)
            if len(specs) == 1:
                if owners[0] != CORE_OWNER:
                    self._specs[name] = specs[0]
                continue
            self.conflicts[name] = owners
            problem = ServiceConflictError(_conflict_message(name, owners))
            for owner in owners:
                if owner != CORE_OWNER:
                    report_failure(host, owner, "register_services", problem, "neither provider is used")
        self._built: dict[str, Any] = {}
        self._failed: dict[str, str] = {}
        self._building: list[str] = []
        self._closed = False

    @property
    def names(self) -> list[str]:
        return sorted(self._specs)

    def provider(self, name: str) -> str:
        return self._specs[name].plugin

    def get(self, name: str, runtime: Any) -> Any:
        if name in self._built:
            return self._built[name]
        if name in self.conflicts:
            raise ServiceConflictError(_conflict_message(name, self.conflicts[name]))
        spec = self._specs.get(name)
        if spec is None:
            known = ", ".join(self.names) or "none"
            raise ServiceNotFoundError(f"no plugin provides service {name!r} (is its plugin disabled? "
                                       f"services provided: {known})")
        if name in self._failed:
            raise ServiceUnavailableError(self._failed[name])
        if self._closed:
            raise ServiceUnavailableError(f"service {name!r} was never built and the runtime is closed")
        if name in self._building:
            raise ServiceUnavailableError(f"service {name!r} depends on itself: "
                                          f"{' -> '.join([*self._building, name])}")
        self._building.append(name)
        try:
            service = spec.factory(runtime)
        except Exception as exc:
            self._failed[name] = (f"service {name!r} of plugin {spec.plugin!r} could not be built: "
                                  f"{type(exc).__name__}: {exc}")
            report_failure(self._host, spec.plugin, f"service {name!r}", exc, "the service is unavailable")
            raise ServiceUnavailableError(self._failed[name]) from exc
        finally:
            self._building.pop()
        self._built[name] = service
        return service

    def built(self, name: str) -> bool:
        return name in self._built

    async def close(self) -> None:
        """Close what was built, newest first; one failing close never stops the others.
        Built services stay readable afterwards (totals, last outcomes); nothing new is built."""
        if self._closed:
            return
        self._closed = True
        for name in reversed(list(self._built)):
            service = self._built[name]
            close = self._specs[name].close
            if close is None:
                continue
            try:
                outcome = close(service)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                print(f"atomic-agent: closing service {name!r} of plugin {self._specs[name].plugin!r} failed: "
                      f"{type(exc).__name__}: {exc}", file=sys.stderr)


def _conflict_message(name: str, owners: tuple[str, ...]) -> str:
    named = " and ".join(f"plugin {owner!r}" if owner != CORE_OWNER else "the core" for owner in owners)
    return (f"service {name!r} is provided by both {named}, so neither is used; disable one of them "
            "in plugins.disabled")
