"""Call a registration hook plugin by plugin: stamp, validate, de-duplicate, sort.

The one module that walks pluggy's hook implementations directly, so each record can be
attributed to the plugin that returned it and a duplicate can name both plugins.
"""

from __future__ import annotations

import inspect  # pluggy imports it anyway; asyncio is imported where it is awaited (not at --help)
import sys
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

import attrs

from atomic_agent.plugin_host.plugin_host import PluginHost

R = TypeVar("R")


BUILT_IN_DISTRIBUTION = "atomic-agent"


def records_by_plugin(host: PluginHost, hook_name: str, record_type: type[R],
                      **kwargs: Any) -> list[tuple[str, list[R]]]:
    """(plugin name, records) for every plugin implementing `hook_name`, in name order.

    A plugin whose implementation raises or returns something that is not a `record_type`
    is reported (stderr and its `plugins` row) and left out; the others are unaffected.
    Records with a `plugin` field carry the name of the plugin that returned them."""
    caller = getattr(host.pm.hook, hook_name)
    found: list[tuple[str, list[R]]] = []
    for impl in sorted(caller.get_hookimpls(), key=lambda i: i.plugin_name):
        plugin_name = impl.plugin_name
        try:
            produced = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
            records = list(produced or [])
            for record in records:
                if not isinstance(record, record_type):
                    raise TypeError(f"{hook_name} returned {type(record).__name__}, "
                                    f"expected {record_type.__name__}")
        except Exception as exc:
            report_failure(host, plugin_name, hook_name, exc, "was skipped")
            continue
        stamped = [attrs.evolve(record, plugin=plugin_name)
                   if attrs.has(type(record)) and "plugin" in attrs.fields_dict(type(record)) else record
                   for record in records]
        found.append((plugin_name, stamped))
    return found


def collect_records(host: PluginHost, hook_name: str, record_type: type[R], *,
                    key: Callable[[R], str] = lambda r: r.name,  # type: ignore[attr-defined]
                    **kwargs: Any) -> list[R]:
    """Every record the plugins return from `hook_name`, sorted by key.

    Failing plugins are isolated as in `records_by_plugin`. A name two plugins register is
    kept from the first (the core and built-in plugins before third-party ones, then name
    order: a plugin someone installed can never replace a built-in tool or approval
    category); the other plugin keeps everything else it registered and the clash is shown
    on its `plugins` row, so no command fails over it.
    """
    by_key: dict[str, tuple[str, R]] = {}
    found = records_by_plugin(host, hook_name, record_type, **kwargs)
    for plugin_name, records in sorted(found, key=lambda pair: built_in_first(host, pair[0])):
        for record in records:
            name = key(record)
            if name in by_key:
                report_conflict(host, plugin_name, f"{record_type.__name__} {name!r} is also registered by plugin "
                                f"{by_key[name][0]!r}, whose one is used")
                continue
            by_key[name] = (plugin_name, record)
    return [by_key[k][1] for k in sorted(by_key)]


def built_in_first(host: PluginHost, plugin_name: str) -> tuple[bool, str]:
    """Sort key: the core and built-in plugins before third-party ones, then by name."""
    return (not _built_in(host, plugin_name), plugin_name)


def _built_in(host: PluginHost, plugin_name: str) -> bool:
    report = host.reports.get(plugin_name)
    return report is None or report.essential or report.distribution == BUILT_IN_DISTRIBUTION


def report_conflict(host: PluginHost, plugin_name: str, what: str) -> None:
    """Record on `plugin_name`'s `plugins` row that one of its names was left out (said once
    on stderr per process and clash)."""
    report = host.reports.get(plugin_name)
    if report is None or what in report.conflicts:
        return
    report.conflicts.append(what)
    print(f"atomic-agent: plugin {plugin_name!r}: {what}; its own is left out", file=sys.stderr)


def report_failure(host: PluginHost, plugin_name: str, where: str, exc: BaseException, outcome: str) -> None:
    """Say on stderr that `plugin_name` failed in `where` (a hook, a service, a channel) and
    record it on the plugin's `atomic-agent plugins` row (the first failure is kept)."""
    print(f"atomic-agent: plugin {plugin_name!r} failed in {where} and {outcome}: "
          f"{type(exc).__name__}: {exc}", file=sys.stderr)
    report = host.reports.get(plugin_name)
    if report is not None and report.status == "loaded":
        report.status = "failed"
        report.error = f"{where}: {type(exc).__name__}: {exc}"


@attrs.frozen
class PluginAnswer:
    """What one plugin's implementation of a hook returned, or the error it raised."""

    plugin: str
    value: Any = None
    error: str = ""


def call_each_plugin(host: PluginHost, hook_name: str, **kwargs: Any) -> list[PluginAnswer]:
    """Call `hook_name` on every plugin in name order and keep each answer apart, so a
    command can attribute results and report a raising plugin without losing the rest."""
    caller = getattr(host.pm.hook, hook_name)
    answers = []
    for impl in sorted(caller.get_hookimpls(), key=lambda i: i.plugin_name):
        try:
            value = impl.function(**{a: kwargs[a] for a in impl.argnames})
            if isinstance(value, Iterator):  # a generator's own errors surface as it is read: read it here
                value = list(value)
            answers.append(PluginAnswer(impl.plugin_name, value))
        except Exception as exc:
            answers.append(PluginAnswer(impl.plugin_name, error=f"{type(exc).__name__}: {exc}"))
    return answers


def call_each(host: PluginHost, hook_name: str, *, undo: Callable[[], Callable[[], None]] | None = None,
              after: Callable[[str], None] | None = None, **kwargs: Any) -> list[tuple[str, Awaitable[Any]]]:
    """Call a hook on every plugin in name order; one failure never stops the rest, and the
    failing plugin is reported (stderr and its `plugins` row).

    `undo`, when given, is called before each plugin and returns what rolls back that
    plugin's partial effect should it raise (e.g. the commands it added before failing).
    An implementation may return an awaitable (work that needs the event loop: connecting
    to servers, closing them); those come back as (plugin, awaitable) pairs for the caller
    to await with `await_lifecycle`. `after`, when given, is called with each plugin's name
    once its implementation returned."""
    caller = getattr(host.pm.hook, hook_name)
    pending: list[tuple[str, Awaitable[Any]]] = []
    for impl in sorted(caller.get_hookimpls(), key=lambda i: i.plugin_name):
        rollback = undo() if undo is not None else None
        try:
            value = impl.function(**{arg: kwargs[arg] for arg in impl.argnames})
        except Exception as exc:
            if rollback is not None:
                rollback()
            report_failure(host, impl.plugin_name, hook_name, exc, "was skipped there")
            continue
        if after is not None:
            after(impl.plugin_name)
        if inspect.isawaitable(value):
            pending.append((impl.plugin_name, value))
    return pending


def call_lifecycle(host: PluginHost, hook_name: str, **kwargs: Any) -> list[tuple[str, Awaitable[Any]]]:
    """`runtime_started` / `runtime_stopping` on every plugin in name order (see call_each);
    the awaitables they returned, for `await_lifecycle`."""
    return call_each(host, hook_name, **kwargs)


async def await_lifecycle(host: PluginHost, hook_name: str, pending: list[tuple[str, Awaitable[Any]]]) -> None:
    """Await what lifecycle implementations returned, concurrently; a failure is reported
    naming its plugin and never stops the others."""
    if not pending:
        return
    import asyncio

    results = await asyncio.gather(*(aw for _, aw in pending), return_exceptions=True)
    for (plugin, _), result in zip(pending, results, strict=True):
        if isinstance(result, Exception):
            report_failure(host, plugin, hook_name, result, "its work there was lost")
