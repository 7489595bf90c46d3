"""The public extension points of atomic-agent.

Registration hooks return iterables of typed records (see :mod:`atomic_agent.api`). The
core validates each record, stamps the plugin name on it, refuses duplicate names (naming
both plugins) and sorts by name, so registration order never decides behaviour. None of
these hooks is `firstresult`: every plugin's answer is collected.

Hooks receive a ``runtime`` argument of type :class:`atomic_agent.api.RuntimeView`: the
loaded config, the state dir and the shared services (stores, the approval gate). It is
the only way a plugin reaches the runtime; plugins import nothing but ``atomic_agent.api``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterable
from typing import TYPE_CHECKING

from atomic_agent.hook_markers import hookspec

if TYPE_CHECKING:
    from pathlib import Path

    import typer

    from atomic_agent.records.approval_category import ApprovalCategory
    from atomic_agent.records.channel_spec import ChannelSpec
    from atomic_agent.records.config_block import ConfigBlock
    from atomic_agent.records.doctor_finding import DoctorFinding
    from atomic_agent.records.memory_phase import MemoryPhase
    from atomic_agent.records.provider_kind import ProviderKind
    from atomic_agent.records.tool_spec import ToolSpec
    from atomic_agent.runtime.runtime_view import RuntimeView


@hookspec
def register_config_blocks() -> Iterable[ConfigBlock]:
    """Contribute top-level blocks of ``config.json``.

    Called once while the config is loaded, before any other hook. Returns ConfigBlock
    records (key, frozen attrs class with defaults, optional raw-dict migration). A key may
    be owned by one plugin only; core keys (``version``, ``agent``, ``plugins``,
    ``tracing``) are reserved.

    Example::

        @hookimpl
        def register_config_blocks():
            return [ConfigBlock(key="weather", cls=WeatherConfig)]
    """


@hookspec
def register_providers() -> Iterable[ProviderKind]:
    """Contribute LLM provider kinds (llama-server, openai-compatible, subscription-cli).

    Called once when the provider registry is built. Returns ProviderKind records: a name
    that ``llm.providers[].kind`` refers to, a factory ``(entry, runtime) -> provider``, and
    capabilities (transport ``grammar`` or ``native_tools``, slot affinity, vision,
    embeddings). Providers are built lazily, only when a config entry uses the kind.
    """


@hookspec
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    """Contribute tools the model can call.

    Called once per runtime, after the config is loaded and before the first prompt is
    built. Returns ToolSpec records: dotted name, one-line summary, args JSON schema,
    resource class (required; how the batch executor may run it), tier (frequent tools get
    full schemas in the stable prefix, rare ones a line under ``# extras``), approval
    category (None for tools that never ask) and an async ``run(args, ctx)``.
    Names must be unique across all plugins.

    Tools that come and go while the runtime runs (an MCP server connects, changes its
    catalog) are not returned here: the plugin replaces its *live group* at any time with
    ``runtime.service("tool_registry").set_live_tools(plugin_name, specs)``, and the next
    step's stable prefix and grammar are rebuilt from the live set.
    """


@hookspec
def register_channels(runtime: RuntimeView) -> Iterable[ChannelSpec]:
    """Contribute remote channels (Telegram, ...).

    Called once per runtime. Returns ChannelSpec records whose ``factory(runtime)`` builds
    a channel with async ``start()`` / ``stop()`` and ``status()``. A channel reaches the
    agent only through ``runtime.run_turn``; the runtime starts enabled channels after
    ``runtime_started`` and stops them before ``runtime_stopping``.
    """


@hookspec
def register_memory_phases(runtime: RuntimeView) -> Iterable[MemoryPhase]:
    """Contribute memory phases (profile, notes, reflection, the v2 phases).

    Called once per runtime. Returns MemoryPhase records with up to four callables:
    ``before_turn(turn_start)`` (synchronous, once per turn inside the session lock: prefetch,
    abort stale work), ``sections(session_id, user_text)`` (read path: PromptSection records
    for the prompt's variable tail, never the stable prefix; each section may carry a token
    cap and a dedupe key — the first section with a key wins), ``after_turn(digest)`` (hot
    path, scheduled after the turn returned, never awaited by it) and ``consolidate()``
    (cold path, on the consolidation tick). Phases run in (order, name) order. A phase that is not registered must leave prompts and stores
    byte-identical to a runtime without it.
    """


@hookspec
def register_approval_categories() -> Iterable[ApprovalCategory]:
    """Contribute categories to the approval ladder.

    Called once when the approval gate is built. Returns ApprovalCategory records: a
    name tools use as ``approval_category``, the ladder level (1..5) from which calls in
    it are auto-approved, a human label for prompts, and whether a session grant may
    silence it. The core registers the ten standard categories itself.
    """


@hookspec
def register_commands(app: typer.Typer) -> None:
    """Add sub-commands to the ``atomic-agent`` CLI.

    Called once in ``main()`` after plugin selection, before arguments are parsed.
    Receives the root typer app; add commands or sub-typers to it. Keep this cheap: import
    heavy modules inside the command functions, not at module top level, so
    ``atomic-agent --help`` stays fast. Returns nothing.
    """


@hookspec
def report_doctor_findings(state_dir: Path) -> Iterable[DoctorFinding]:
    """Contribute read-only checks to ``atomic-agent doctor``.

    Called once per ``doctor`` run, after the core's own checks, with the state directory;
    the config may be broken, so build no runtime here. Returns DoctorFinding records
    (check, level ok|warn|error, detail, advice). Never write anything. A raising
    implementation becomes an error finding naming the plugin; the others still run.
    """


@hookspec
def runtime_started(runtime: RuntimeView) -> Awaitable[None] | None:
    """The runtime finished bootstrapping (tools, providers and memory are wired).

    Called once, in plugin-name order; a raising implementation is reported and does not
    stop the others. Returns nothing, or an awaitable for work that needs the event loop
    (connecting to external servers): ``create_runtime`` awaits every returned awaitable,
    concurrently, before it hands the runtime out, so tools such work registers with
    ``runtime.service("tool_registry").set_live_tools(...)`` are in the first prompt. A
    failing awaitable is reported naming its plugin. A plugin may publish an object other
    plugins and hosts reach by name with ``runtime.provide_service(name, value)``.
    """


@hookspec
def runtime_stopping(runtime: RuntimeView) -> None:
    """The runtime is about to close its stores and providers.

    Called once, in plugin-name order, before durable writes are flushed; release
    resources here. A raising implementation is reported and does not stop the others.
    Returns nothing, or an awaitable (closing connections); the runtime awaits them all
    before it closes its provider, so a plugin still draining LLM calls can finish.
    """
