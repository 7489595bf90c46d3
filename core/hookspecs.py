"""The public extension points of atomic-agent.

Registration hooks return iterables of typed records (see :mod:`atomic_agent.api`). The
core validates each record, stamps the plugin name on it, refuses duplicate names (naming
both plugins) and sorts by name, so registration order never decides behaviour. None of
these hooks is `firstresult`: every plugin's answer is collected, and a plugin whose
implementation raises is reported (stderr and its `atomic-agent plugins` row, with the
error) and left out while every other plugin keeps working.

Hooks that take a ``runtime`` receive a :class:`atomic_agent.api.RuntimeView`: the loaded
config, the state dir, ``service(name)``, the gate, tools, sessions, provider and turns (see
its members). It is the only way a plugin reaches the runtime, and a plugin changes nothing
on it but through its methods; plugins import nothing but ``atomic_agent.api``. Which
services exist when:

- from the first hook that takes a runtime (``register_tools``) on: ``state_dir``,
  ``prompt_assets`` (templates and grammars: the user's, then the plugins' own
  ``templates/`` and ``grammars/`` folders, then the core's), ``approval_gate``,
  ``turn_controller``, ``sessions`` and every service a plugin provides through
  ``register_services``;
- from ``runtime_started`` on, also ``tool_registry`` (it is the result of
  ``register_tools``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import pluggy

# The pluggy markers for the `atomic_agent` project name (the only pluggy names plugins see).

PROJECT_NAME = "atomic_agent"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.config.app_config import AppConfig
    from atomic_agent.hook_records import (
        ApprovalCategory,
        ChannelSpec,
        ConfigBlock,
        DoctorFinding,
        MemoryPhase,
        ProviderKind,
        ServiceSpec,
        TickSpec,
        ToolSpec,
    )
    from atomic_agent.plugin_host.plugin_host import PluginHost
    from atomic_agent.runtime.runtime_view import RuntimeView


@hookspec
def register_config_blocks() -> Iterable[ConfigBlock]:
    """Contribute top-level blocks of ``config.json``.

    Called once per process while the config is loaded, before any other hook; receives
    nothing. Returns ConfigBlock records (key, frozen attrs class with defaults, optional
    raw-dict migration); every plugin's collected. A key may be owned by one plugin
    only; core keys (``version``, ``agent``, ``plugins``, ``tracing``) are reserved.

    Example::

        @hookimpl
        def register_config_blocks():
            return [ConfigBlock(key="weather", cls=WeatherConfig)]
    """


@hookspec
def register_providers() -> Iterable[ProviderKind]:
    """Contribute LLM provider kinds (llama-server, openai-compatible, subscription-cli).

    Called once when the provider registry is built (at the first model call, or by the
    provider commands); receives nothing. Returns ProviderKind records, every plugin's
    collected: a name that ``llm.providers[].kind`` refers to, a factory
    ``(entry, runtime) -> provider``, capabilities (transport ``grammar`` or
    ``native_tools``, slot affinity, vision, embeddings), and whether the kind is the local
    default (``default_local``: the kind a config without providers runs on; at most one).
    Providers are built lazily, only when a config entry uses the kind.
    """


@hookspec
def register_services() -> Iterable[ServiceSpec]:
    """Share an object (a store, a client, a registry) with the other plugins.

    Called once per runtime while it is built, before any hook that receives the runtime,
    by ``atomic-agent plugins`` (to check), and by commands without a runtime (``status``,
    ``task``, ``storage``, opening the session store) to find the session backend and the
    services they build over a command view; receives nothing. Returns ServiceSpec
    records, every plugin's collected: a name, a ``factory(runtime)`` building the object
    the first time ``runtime.service(name)`` asks for it (never before), and an optional
    ``close(service)`` the runtime calls after ``runtime_stopping``. One owner per name: a
    name two plugins provide is used by neither (asking raises an error naming both),
    unless every provider sets ``multiple=True`` (``runtime.services(name)`` returns them
    all); the core's service names are reserved. ``runtime.service(name, default)`` returns
    the default when the service cannot be had. A factory that raises is reported; that service
    stays unavailable and everything else keeps working. An implementation that raises loses
    its services in a runtime, but fails a command without a runtime ("the plugins' services
    could not be listed"): it must not guess which store holds the state.
    """


@hookspec
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    """Contribute tools the model can call.

    Called once per runtime while it is built, after ``register_services`` and the
    approval gate, before ``register_memory_phases`` and the first prompt. Receives the
    runtime view (``approval_gate``, ``sessions``, ``turn_controller`` and plugin services
    are there; ``tool_registry`` is not yet). Returns ToolSpec records, every plugin's
    collected: dotted name, one-line summary, args JSON schema, resource class (required;
    how the batch executor may run it), tier (frequent tools get full schemas in the stable
    prefix, rare ones a line under ``# extras``), approval category (None for tools that
    never ask) and an async ``run(args, ctx)``. Names must be unique across all plugins.

    Tools that come and go while the runtime runs (an MCP server connects, changes its
    catalog) are not returned here: the plugin replaces its *live group* at any time with
    ``runtime.service("tool_registry").set_live_tools(plugin_name, specs)``, and the next
    step's stable prefix and grammar are rebuilt from the live set.
    """


@hookspec
def register_channels(runtime: RuntimeView) -> Iterable[ChannelSpec]:
    """Contribute remote channels (Telegram, ...).

    Called once per runtime while it is built, after ``register_memory_phases``; receives
    the runtime view. Returns ChannelSpec records, every plugin's collected; return a
    channel only when the plugin's config enables it (registered means started), or, for a
    channel with live control (Telegram), always, with its ``start()`` doing nothing while
    its own config disables it. Each
    ``factory(runtime)`` builds a channel with async ``start()`` / ``stop()`` and
    ``status()``. Only a serving runtime (``create_runtime(serving=True)``: serve, the
    sidecar, ``scheduler``, ``telegram run``; never a one-shot ``run``) builds and starts the
    channels, after ``runtime_started``; it stops them first when it closes, before
    ``runtime_stopping``. A factory or ``start()`` that raises is reported with the plugin
    and channel name; the other channels still start. A channel reaches the agent only
    through ``runtime.run_turn``.
    """


@hookspec
def register_ticks(runtime: RuntimeView) -> Iterable[TickSpec]:
    """Contribute periodic work the runtime runs while it is up (a task scheduler, a sweep).

    Called once per runtime while it is built, after ``register_channels``; receives the
    runtime view. Returns TickSpec records, every plugin's collected: a name, ``interval_s``
    and an async ``run()``. The runtime owns every timer: a serving runtime (as for
    channels; never a one-shot ``run``) starts the ticks after the channels started (first
    run one interval later), never enters a tick again while it
    runs, counts and reports a tick that raises and keeps ticking, and stops them all in
    ``close()`` before ``runtime_stopping``. ``runtime.run_tick(name)`` runs one now.
    Return nothing when the plugin's config switches the work off.
    """


@hookspec
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    """Contribute memory phases (profile, notes, reflection, the v2 phases).

    Called once per runtime while it is built, after ``register_tools``; receives the
    runtime view. Returns MemoryPhase records, every plugin's collected, with up to six
    optional callables: ``before_turn(turn_start)`` (synchronous, once per turn inside the
    session lock: prefetch, abort stale work; its return value is not used),
    ``prepare_turn(turn_start)`` (awaited after every phase's ``before_turn``, before the
    first step, for a round trip the sections need; it bounds its own time), ``turn_notices(session_id, turn_index)``
    (short texts for the person as the turn ends), ``sections(session_id, user_text)`` (read path:
    PromptSection records for the prompt's variable tail, never the stable prefix; each
    section may carry a token cap and a dedupe key — the first section with a key wins),
    ``after_turn(digest)`` (hot path, scheduled after the turn returned, never awaited by
    it) and ``consolidate()`` (cold path: awaited on the runtime's consolidation tick,
    every ``agent.consolidationIntervalS`` seconds, one tick at a time; a phase that raises
    is reported and the next phase still runs; so is any other callable that raises, and the
    turn goes on without what it would have added). Phases run in (order, name) order. A phase
    that is not registered must leave prompts and stores byte-identical to a runtime
    without it.
    """


@hookspec
def register_approval_categories() -> Iterable[ApprovalCategory]:
    """Contribute categories to the approval ladder.

    Called once per runtime when the approval gate is built (before ``register_tools``);
    receives nothing. Returns ApprovalCategory records, every plugin's collected: a name
    tools use as ``approval_category``, the ladder level (1..5) from which calls in it are
    auto-approved, a human label for prompts, and whether a session grant may silence it.
    The core registers the ten standard categories itself.
    """


@hookspec
def register_commands(app: typer.Typer) -> None:
    """Add sub-commands to the ``atomic-agent`` CLI.

    Called once per process in ``main()`` after plugin selection, before arguments are
    parsed, plugin by plugin in name order. Receives the root typer app; add commands or
    sub-typers to it. Returns nothing. A plugin that raises here is reported by
    ``atomic-agent plugins`` and the commands it added are removed; every other command,
    ``--help`` included, keeps working. Keep this cheap: import heavy modules inside the
    command functions, not at module top level, so ``atomic-agent --help`` stays fast.
    """


@hookspec
def report_doctor_findings(state_dir: Path, plugin_host: PluginHost, config: AppConfig | None
                           ) -> Iterable[DoctorFinding]:
    """Contribute read-only checks to ``atomic-agent doctor``.

    Called once per ``doctor`` run, after the core's own checks; receives the state
    directory, the plugin host and the loaded config, None when config.json does not load
    (build no runtime here; an implementation may take only the arguments it reads). With a
    config, ``plugin_host.command_services(state_dir, config, name)`` builds other plugins'
    services as a command without a runtime sees them (the fleet's database). Returns DoctorFinding
    records, every plugin's collected (check, level ok|warn|error, detail, advice). Never
    write anything. A raising implementation becomes an error finding naming the plugin;
    the others still run.
    """


@hookspec
def report_status(state_dir: Path, config: AppConfig, plugin_host: PluginHost) -> Iterable[Mapping[str, Any]]:
    """Contribute lines to ``atomic-agent status``, the one-screen overview.

    Called once per ``status`` run; receives the state directory, the loaded config and the
    plugin host (what a store opened without a runtime needs to find the configured session
    backend; most implementations take only the first two) (build no runtime here: read the plugin's files, probe a loopback address at most, and
    answer within a second or two). Returns mappings, every plugin's collected, each with
    ``section`` (``model``, ``sessions``, ``approvals``, ``channels``, ``tasks`` or a name of
    the plugin's own), ``name``, ``state`` (``ok``, ``warn``, ``error`` or ``off``) and a
    one-line ``summary``; optional ``problems`` (sentences shown under "needs attention")
    and ``detail`` (a JSON-able mapping for ``--json``). Never write anything. A raising
    implementation becomes an error line naming the plugin; the others still show.
    """


@hookspec
def runtime_started(runtime: RuntimeView) -> Awaitable[None] | None:
    """The runtime finished bootstrapping (services, gate, tools, memory phases and
    channel specs are wired; the provider is built lazily at the first model call).

    Called once per runtime, when it is started (``create_runtime`` and ``Runtime.start``;
    a runtime only constructed, e.g. to list its tools, never fires it), in plugin-name
    order, before any channel starts; receives the runtime view (every service is there). A raising
    implementation is reported and does not stop the others. Returns nothing, or an
    awaitable for work that needs the event loop (connecting to external servers):
    ``create_runtime`` awaits every returned awaitable, concurrently, before it starts the
    channels and hands the runtime out, so tools such work registers with
    ``runtime.service("tool_registry").set_live_tools(...)`` are in the first prompt. A
    failing awaitable is reported naming its plugin.
    """


@hookspec
def runtime_stopping(runtime: RuntimeView) -> Awaitable[None] | None:
    """The runtime is about to close its stores and providers.

    Called once per started runtime from ``close()`` (never when ``runtime_started`` was
    not fired), in plugin-name order, after the channels and
    the consolidation tick stopped and the running turns ended, before the services
    plugins provide are closed (so they can still be used here) and before the sessions
    store and the provider close; flush and release resources here. Receives the runtime
    view. A raising implementation is reported and does not stop the others. Returns
    nothing, or an awaitable (closing connections): the runtime awaits them all before it
    closes services and the provider, so a plugin still draining model calls can finish.
    """
