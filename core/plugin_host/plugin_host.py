"""The plugin manager factory: entry points in, a checked pluggy manager and reports out.

Which discovered plugins load is decided before loading (`ATOMIC_AGENT_PLUGINS`, an
allow-list, and `plugins.disabled`), so a disabled plugin costs nothing; every plugin gets
a `PluginReport`, the row `atomic-agent plugins` shows."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Union

import attrs
import pluggy

from atomic_agent import hookspecs
from atomic_agent.config.retired_plugins import FORMER_NAMES
from atomic_agent.hookspecs import PROJECT_NAME
from atomic_agent.plugin_host.entry_point_scan import FoundEntryPoint, scan

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint
    from pathlib import Path

AnyEntryPoint = Union["EntryPoint", FoundEntryPoint]

ENTRY_POINT_GROUP = "atomic_agent"
CORE_PLUGIN_NAME = "core"
STRICT_ENV = "ATOMIC_AGENT_STRICT_PLUGINS"
TRACE_ENV = "ATOMIC_AGENT_TRACE_PLUGINS"
ALLOW_ENV = "ATOMIC_AGENT_PLUGINS"


@attrs.define
class PluginReport:
    """Status of one plugin: "loaded", "disabled" or "failed" (with the error)."""

    name: str
    distribution: str
    version: str
    status: str
    hooks: list[str] = attrs.field(factory=list)
    error: str | None = None
    essential: bool = False
    # names this plugin registered that another plugin had first: left out, the rest still works
    conflicts: list[str] = attrs.field(factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "distribution": self.distribution,
            "version": self.version,
            "status": self.status,
            "hooks": self.hooks,
            "error": self.error,
            "essential": self.essential,
            "conflicts": self.conflicts,
        }


def allowed_names(environ: Mapping[str, str]) -> set[str] | None:
    """The allow-list from the environment: None means "all"; an empty set means "none"."""
    if ALLOW_ENV not in environ:
        return None
    return {part.strip() for part in environ[ALLOW_ENV].split(",") if part.strip()}


def is_selected(name: str, allowed: set[str] | None, disabled: Iterable[str]) -> tuple[bool, str | None]:
    """Decide before loading, so a disabled plugin costs nothing. Returns (load?, why-not)."""
    names = {name, FORMER_NAMES[name]} if name in FORMER_NAMES else {name}
    if allowed is not None and not names & allowed:
        return False, f"not in {ALLOW_ENV}"
    if names & set(disabled):
        return False, "listed in plugins.disabled"
    return True, None


class PluginHost:
    """Owns the pluggy manager and what happened to every plugin while loading."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict  # re-raise plugin failures (CI, plugin development)
        self.pm = pluggy.PluginManager(PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.reports: dict[str, PluginReport] = {}

    @property
    def hook(self) -> Any:
        return self.pm.hook

    def register(self, plugin: object, name: str, *, distribution: str = "", version: str = "",
                 essential: bool = False) -> PluginReport:
        """Register an in-process plugin; a plugin that fails validation is rolled back."""
        try:
            self.pm.register(plugin, name=name)
            try:
                self.pm.check_pending()
            except pluggy.PluginValidationError:
                self.pm.unregister(name=name)
                raise
        except Exception as exc:  # isolation: report, keep going
            report = PluginReport(name, distribution, version, "failed", error=_describe(exc),
                                  essential=essential)
            self._fail(report, exc)
            return report
        report = PluginReport(name, distribution, version, "loaded",
                              hooks=self._hook_names(plugin), essential=essential)
        self.reports[name] = report
        return report

    def unregister(self, name: str) -> None:
        if self.pm.get_plugin(name) is not None:
            self.pm.unregister(name=name)
        self.reports.pop(name, None)

    def command_service(self, state_dir: Path, config: Any, name: str) -> Any:
        """A plugin's service `name` as a command without a runtime sees it (`task ...` and
        `status` on a fleet host read `shared_database`): see configured_backend.command_service."""
        from atomic_agent.turns.configured_backend import command_service

        return command_service(state_dir, config, self, name)

    def command_services(self, state_dir: Path, config: Any, name: str) -> list[Any]:
        """Every provider's service `name` as a command without a runtime sees them
        (`storage migrate` reads each plugin's `shared_state`): see configured_backend."""
        from atomic_agent.turns.configured_backend import command_services

        return command_services(state_dir, config, self, name)

    def plugin_name_of(self, impl_plugin: object) -> str:
        return self.pm.get_name(impl_plugin) or "?"

    def _hook_names(self, plugin: object) -> list[str]:
        callers = self.pm.get_hookcallers(plugin) or []
        return sorted(caller.name for caller in callers)

    def _fail(self, report: PluginReport, exc: BaseException) -> None:
        self.reports[report.name] = report
        print(f"atomic-agent: plugin {report.name!r} ({report.distribution or 'in-process'}) "
              f"failed to load and was skipped: {report.error}", file=sys.stderr)
        if self.strict:
            raise exc


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def discover_entry_points() -> list[AnyEntryPoint]:
    """Every plugin entry point installed, sorted by name (load order is deterministic).

    Read from the distributions' own files (entry_point_scan) so that no start pays for
    importlib.metadata; a sys.path holding archives is left to importlib.metadata."""
    scanned = scan(ENTRY_POINT_GROUP)
    found: list[AnyEntryPoint] = list(scanned or [])
    if scanned is None:
        from importlib.metadata import entry_points

        found = list(entry_points(group=ENTRY_POINT_GROUP))
    return sorted(found, key=lambda ep: ep.name)


def build_plugin_host(disabled: Iterable[str] = (), environ: Mapping[str, str] | None = None,
                      entry_points_list: Iterable[AnyEntryPoint] | None = None) -> PluginHost:
    """Build a plugin host: the core's own hooks plus every selected entry-point plugin."""
    env = os.environ if environ is None else environ
    host = PluginHost(strict=env.get(STRICT_ENV) == "1")
    from atomic_agent import core_plugin

    host.register(core_plugin, CORE_PLUGIN_NAME, distribution="atomic-agent",
                  version=_core_version(), essential=True)
    allowed = allowed_names(env)
    disabled_list = list(disabled)
    eps = discover_entry_points() if entry_points_list is None else sorted(entry_points_list, key=lambda e: e.name)
    seen: set[str] = set()
    for ep in eps:
        dist_name, dist_version = _distribution_of(ep)
        if ep.name in seen:
            host._fail(PluginReport(ep.name, dist_name, dist_version, "failed",
                                    error="another installed distribution registers the same plugin name"),
                       RuntimeError(f"duplicate plugin name {ep.name}"))
            continue
        seen.add(ep.name)
        selected, why = is_selected(ep.name, allowed, disabled_list)
        if not selected:
            host.reports[ep.name] = PluginReport(ep.name, dist_name, dist_version, "disabled", error=why)
            continue
        try:
            module = ep.load()
        except Exception as exc:
            host._fail(PluginReport(ep.name, dist_name, dist_version, "failed", error=_describe(exc)), exc)
            continue
        host.register(module, ep.name, distribution=dist_name, version=dist_version)
    if env.get(TRACE_ENV) == "1":
        _trace_hook_calls(host)
    return host


def _distribution_of(ep: AnyEntryPoint) -> tuple[str, str]:
    if isinstance(ep, FoundEntryPoint):
        return ep.dist_name, ep.dist_version
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "", ""
    return dist.metadata["Name"] or "", dist.version or ""


def _core_version() -> str:
    from atomic_agent import __version__

    return __version__


def _trace_hook_calls(host: PluginHost) -> None:
    def before(hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        names = ", ".join(impl.plugin_name for impl in impls)
        print(f"atomic-agent: hook {hook_name} -> [{names}]", file=sys.stderr)

    def after(outcome: Any, hook_name: str, impls: Sequence[Any], kwargs: Mapping[str, Any]) -> None:
        return None

    host.pm.add_hookcall_monitoring(before, after)

