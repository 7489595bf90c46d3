"""Build a fresh plugin host for a test and register in-process plugins on it."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import EntryPoint

from atomic_agent.plugin_host.plugin_host import PluginHost, build_plugin_host
from atomic_agent.plugin_host.plugin_report import PluginReport


def fresh_plugin_host(entry_points: Iterable[EntryPoint] = (), environ: Mapping[str, str] | None = None,
                      disabled: Iterable[str] = ()) -> PluginHost:
    """A host with the core's own hooks and only the given entry points (default: none)."""
    return build_plugin_host(disabled=disabled, environ=environ or {}, entry_points_list=list(entry_points))


def installed_plugin_host(environ: Mapping[str, str] | None = None, disabled: Iterable[str] = ()) -> PluginHost:
    """A host with every installed entry-point plugin, as `atomic-agent` would build it."""
    return build_plugin_host(disabled=disabled, environ=environ or {})


@contextmanager
def registered_plugin(host: PluginHost, plugin: object, name: str) -> Iterator[PluginReport]:
    """Register `plugin` for the duration of the block; always unregistered afterwards."""
    report = host.register(plugin, name)
    try:
        yield report
    finally:
        host.unregister(name)


def collected_tools(host: PluginHost, runtime: object) -> list:
    """The ToolSpecs every plugin on `host` registers, exactly as the runtime collects them."""
    from atomic_agent.plugin_host.collect_registrations import collect_records
    from atomic_agent.hook_records import ToolSpec

    return collect_records(host, "register_tools", ToolSpec, runtime=runtime)
