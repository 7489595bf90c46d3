"""The services plugins provide to each other: one owner per name (or several, for a name
every provider marks `multiple`), built lazily, failures isolated.

A single-owner name two plugins provide is used by neither: asking for it raises an error
naming both, and both plugins' `atomic-agent plugins` rows say so. A factory that raises is
reported once and its service stays unavailable (every later ask gets the same error) — the
rest of the runtime keeps working.
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
# `runtime.service(name)` given no default raises; any default, None included, is returned instead
NO_DEFAULT: Any = object()


class ServiceUnavailableError(RuntimeError):
    """The service cannot be had in this runtime: no plugin provides it, two do, or its
    factory raised. `runtime.service(name, default)` returns the default instead."""


# KeyError stays a base so code written against the first service API keeps working
class ServiceNotFoundError(ServiceUnavailableError, KeyError):
    """No plugin provides the service (or its provider failed to register)."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class ServiceConflictError(ServiceNotFoundError):
    """Two or more plugins provide a single-owner name, so none of them is used."""


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
        self._many: dict[str, tuple[ServiceSpec, ...]] = {}  # names every provider marked `multiple`
        self.conflicts: dict[str, tuple[str, ...]] = {}
        for name, specs in sorted(providers.items()):
            owners = tuple(spec.plugin for spec in specs)
            if all(spec.multiple for spec in specs):
                self._many[name] = tuple(sorted(specs, key=lambda spec: spec.plugin))
                continue
            if len(specs) == 1:
                if owners[0] != CORE_OWNER:
                    self._specs[name] = specs[0]
                continue
            self.conflicts[name] = owners
            problem = ServiceConflictError(_conflict_message(name, owners))
            for owner in owners:
                if owner != CORE_OWNER:
                    report_failure(host, owner, "register_services", problem, "neither provider is used")
        self._built: dict[tuple[str, str], Any] = {}
        self._failed: dict[tuple[str, str], str] = {}
        self._building: list[str] = []
        self._closed = False

    @property
    def names(self) -> list[str]:
        return sorted([*self._specs, *self._many])

    def provider(self, name: str) -> str:
        if name in self._many:
            return ", ".join(spec.plugin for spec in self._many[name])
        return self._specs[name].plugin

    def get(self, name: str, runtime: Any) -> Any:
        """The one provider's service. A `multiple` name answers here only while exactly
        one plugin provides it; `get_all` returns every provider's."""
        if name in self.conflicts:
            raise ServiceConflictError(_conflict_message(name, self.conflicts[name]))
        many = self._many.get(name)
        if many is not None and len(many) > 1:
            raise ServiceConflictError(f"service {name!r} has several providers "
                                       f"({', '.join(spec.plugin for spec in many)}); ask for all of them "
                                       "with runtime.services(name)")
        spec = many[0] if many else self._specs.get(name)
        if spec is None:
            known = ", ".join(self.names) or "none"
            raise ServiceNotFoundError(f"no plugin provides service {name!r} (is its plugin disabled? "
                                       f"services provided: {known})")
        return self._build(spec, runtime)

    def get_all(self, name: str, runtime: Any) -> list[Any]:
        """Every provider's service for `name`, by plugin name; a provider whose factory
        failed is left out (it was reported). Empty when no plugin provides the name."""
        if name in self.conflicts:
            raise ServiceConflictError(_conflict_message(name, self.conflicts[name]))
        specs = self._many.get(name) or ((self._specs[name],) if name in self._specs else ())
        built = []
        for spec in specs:
            try:
                built.append(self._build(spec, runtime))
            except ServiceUnavailableError:
                continue
        return built

    def _build(self, spec: ServiceSpec, runtime: Any) -> Any:
        name, key = spec.name, (spec.name, spec.plugin)
        if key in self._built:
            return self._built[key]
        if key in self._failed:
            raise ServiceUnavailableError(self._failed[key])
        if self._closed:
            raise ServiceUnavailableError(f"service {name!r} was never built and the runtime is closed")
        if name in self._building:
            raise ServiceUnavailableError(f"service {name!r} depends on itself: "
                                          f"{' -> '.join([*self._building, name])}")
        self._building.append(name)
        try:
            service = spec.factory(runtime)
        except Exception as exc:
            self._failed[key] = (f"service {name!r} of plugin {spec.plugin!r} could not be built: "
                                 f"{type(exc).__name__}: {exc}")
            report_failure(self._host, spec.plugin, f"service {name!r}", exc, "the service is unavailable")
            raise ServiceUnavailableError(self._failed[key]) from exc
        finally:
            self._building.pop()
        self._built[key] = service
        return service

    def built(self, name: str) -> bool:
        return any(built_name == name for built_name, _ in self._built)

    async def close(self) -> None:
        """Close what was built, newest first; one failing close never stops the others.
        Built services stay readable afterwards (totals, last outcomes); nothing new is built."""
        if self._closed:
            return
        self._closed = True
        specs = {(spec.name, spec.plugin): spec for spec in [*self._specs.values(), *sum(self._many.values(), ())]}
        for key in reversed(list(self._built)):
            service, spec = self._built[key], specs[key]
            name, close = spec.name, spec.close
            if close is None:
                continue
            try:
                outcome = close(service)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                print(f"atomic-agent: closing service {name!r} of plugin {spec.plugin!r} failed: "
                      f"{type(exc).__name__}: {exc}", file=sys.stderr)


def _conflict_message(name: str, owners: tuple[str, ...]) -> str:
    named = " and ".join(f"plugin {owner!r}" if owner != CORE_OWNER else "the core" for owner in owners)
    return (f"service {name!r} is provided by both {named}, so neither is used; disable one of them "
            "in plugins.disabled")
