"""Build a plugin host or a real Runtime for a test: chosen plugins, a config, a scripted provider.

A host alone (`fresh_plugin_host`, `registered_plugin`, `collected_tools`) is enough to test
what a plugin registers. What a plugin author's test needs to run their plugin inside the
real runtime without starting a model server:

    runtime = await runtime_for_test(tmp_path / "state", plugins={"mine": my_plugin},
                                     config={"mine": {"enabled": True}},
                                     provider=ScriptedProvider([...]))

The names avoid a `test_` prefix so pytest never collects them when a test module
imports them. The runtime is imported when a runtime is built, so the pytest plugin that
uses the host builders stays cheap to load.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.plugin_host.plugin_host import PluginHost, PluginReport, build_plugin_host

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

    from atomic_agent.hook_records import ToolSpec
    from atomic_agent.runtime.boot_context import BootContext
    from atomic_agent.runtime.runtime import Runtime


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


def collected_tools(host: PluginHost, runtime: object) -> list[ToolSpec]:
    """The ToolSpecs every plugin on `host` registers, exactly as the runtime collects them."""
    from atomic_agent.hook_records import ToolSpec
    from atomic_agent.plugin_host.collect_registrations import collect_records

    return collect_records(host, "register_tools", ToolSpec, runtime=runtime)


def boot_for_test(state_dir: Path, *, plugins: Mapping[str, object] | None = None, installed: bool = False,
                  config: Mapping[str, Any] | None = None,
                  environ: MutableMapping[str, str] | None = None) -> BootContext:
    """Boot `state_dir` with the core's hooks plus `plugins` (name → plugin object or
    module); `installed=True` starts from every installed entry-point plugin instead of
    none. `config` (its blocks, without the version) replaces config.json when given; a
    state dir reused across restarts keeps its file when it is not. `environ` defaults
    to an empty environment, so the test never reads the developer's keys."""
    from atomic_agent.config.migrate_config import CONFIG_VERSION
    from atomic_agent.runtime.boot_context import boot

    state_dir.mkdir(parents=True, exist_ok=True)
    if config is not None:
        (state_dir / "config.json").write_text(json.dumps({"version": CONFIG_VERSION, **config}, indent=2))
    env: MutableMapping[str, str] = {} if environ is None else environ
    host: PluginHost = installed_plugin_host(environ=env) if installed else fresh_plugin_host(environ=env)
    for name, plugin in (plugins or {}).items():
        host.register(plugin, name)
    return boot(state_dir, environ=env, host=host)


async def runtime_for_test(state_dir: Path, *, plugins: Mapping[str, object] | None = None, installed: bool = False,
                           config: Mapping[str, Any] | None = None, provider: Any = None, ask: Any = None,
                           environ: MutableMapping[str, str] | None = None, start: bool = True,
                           serving: bool = False) -> Runtime:
    """A Runtime booted as `boot_for_test` does, with `provider` (default: a
    ScriptedProvider with an empty script). `start=False` returns it unstarted (a test
    that registers hooks or fakes before `runtime_started`); `serving=True` also runs the
    channels and ticks, as serve does. `environ` is what the boot and the tools' children
    see; without it the boot sees an empty environment and children the process's own
    (filtered as always). Close it with `await runtime.close()`."""
    from atomic_agent.runtime.runtime import Runtime, create_runtime
    from atomic_agent.testing.scripted_provider import ScriptedProvider

    ctx = boot_for_test(state_dir, plugins=plugins, installed=installed, config=config,
                        environ={} if environ is None else environ)
    chosen = provider if provider is not None else ScriptedProvider([])
    children = None if environ is None else dict(environ)
    if not start:
        return Runtime(ctx, provider=chosen, ask=ask, environ=children)
    return await create_runtime(boot_context=ctx, provider=chosen, ask=ask, environ=children, serving=serving)
