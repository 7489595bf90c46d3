"""The records plugins hand the core: what each registration hook returns (tools, approval
categories, channels, config blocks, doctor findings, memory phases, provider kinds,
services, ticks), and the context a tool runs with.

Plain attrs classes with no behaviour beyond checking themselves; the core stamps each
with the plugin that registered it. They import nothing heavy: `--help` loads this module.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:  # an annotation only: `--help` loads these records without asyncio
    import asyncio


# What a running tool receives besides its args.

@attrs.define
class ToolContext:
    """Per-call context: the session, where it works, and how to stop.

    `cancelled` is set when the turn is cancelled; long-running tools poll or await it.
    `request_approval(category, summary)` asks the approval gate and returns True when the
    call may proceed. The runtime's implementation also takes the keyword arguments
    `binding=` (an ApprovalBinding: the approval then holds only for that exact call) and
    `command_shape=` (the normalised binary a shell command runs, offered as a `[a]`
    grant); `ask_approval` passes them only to callables that accept them.
    """

    session_id: str
    working_dir: Path
    state_dir: Path
    cancelled: asyncio.Event
    request_approval: Callable[..., Awaitable[bool]]
    services: dict[str, Any] = attrs.field(factory=dict)
    # ask the person a structured question (`ask_user`): a durable record every surface
    # answers once; None where no gate keeps records (the answer is the settled record)
    ask_question: Callable[[Mapping[str, Any]], Awaitable[Any]] | None = None

    async def ask_approval(self, category: str, summary: str, *, binding: Any = None,
                           command_shape: str | None = None) -> bool:
        extra = {k: v for k, v in (("binding", binding), ("command_shape", command_shape)) if v is not None}
        if extra and not _accepts(self.request_approval, extra):
            extra = {}
        return bool(await self.request_approval(category, summary, **extra))


def _accepts(fn: Callable[..., Any], names: dict[str, Any]) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return True
    return set(names) <= {p.name for p in params}


# What a plugin registers to add a category to the five-level approval ladder.

def _check_level(_inst: object, _attr: attrs.Attribute[int], value: int) -> None:
    if not isinstance(value, int) or not 1 <= value <= 5:
        raise ValueError(f"auto_approve_level must be an integer in 1..5, got {value!r}")


@attrs.frozen
class ApprovalCategory:
    """A named category: calls in it are auto-approved from `auto_approve_level` up.

    `grantable` says whether a per-session grant may silence it (trust_config never).
    `always_asks` makes a category that no level silences, not even 5 (full trust): the
    gate asks every time, and with no one to ask the answer is no. It is for calls the
    guards cannot judge (a shell line whose effect depends on what a download or a
    decoder produces), never for ordinary work.
    """

    name: str
    auto_approve_level: int = attrs.field(validator=_check_level)
    label: str
    grantable: bool = True
    plugin: str = ""
    always_asks: bool = False


# What a channel plugin registers: a remote surface with a lifecycle (e.g. Telegram).

class Channel(Protocol):
    """A running channel. Inbound messages funnel into the runtime's turn controller."""

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    def status(self) -> dict[str, Any]: ...


@attrs.frozen
class ChannelSpec:
    """A channel kind; `factory(runtime)` builds it, the runtime starts and stops it."""

    name: str
    factory: Callable[[Any], Channel]
    summary: str = ""
    plugin: str = ""


# What a plugin registers to own a block of config.json.

@attrs.frozen
class ConfigBlock:
    """A top-level block of config.json owned by a plugin.

    `cls` is a frozen attrs class with defaults for every field; keys on disk are the
    camelCase form of the field names. `migrate(raw)` receives the block's raw mapping
    as read from disk and returns it upgraded (idempotent); it runs before structuring.

    `former_defaults` maps a dotted camelCase key inside the block (`threads`,
    `embeddings.threads`) to the defaults it had in earlier releases. Files written before
    config.json kept only what the user set hold every default of the release that wrote
    them; a value there equal to a former default was written, not chosen, so the one-time
    migration drops it and the current default applies. Only a default that changed while
    files were written whole (config v2) needs an entry; later changes reach users by themselves.
    """

    key: str
    cls: type
    migrate: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    plugin: str = ""
    former_defaults: Mapping[str, tuple[Any, ...]] = attrs.field(factory=dict)


# What a `report_doctor_findings` hook returns: one read-only observation about the installation.

OK, WARN, ERROR = "ok", "warn", "error"


@attrs.frozen
class DoctorFinding:
    """One line of `atomic-agent doctor`: what was checked, how it stands (ok, warn or
    error), what was seen, and what to do about it."""

    check: str
    level: str = attrs.field(validator=attrs.validators.in_((OK, WARN, ERROR)))
    detail: str
    advice: str = ""
    path: str | None = None
    plugin: str = ""


# What a memory plugin registers: one phase of the memory fabric.

@attrs.frozen
class PromptSection:
    """A `### <heading>` section of the prompt's variable tail.

    `slot` places it in mutability order: "loaded" sections open the tail (skill bodies a
    session loaded; they share `agent.tokenBudget` with the session facts), "memory"
    sections come before session-facts (profile, memory-index), "recall" sections after it
    (recalled notes), and a "world" section fills `### world` (the browser's page
    snapshot; the last one wins, capped by `agent.worldSnapshotMaxTokens`).

    A "memory" or "recall" body is data, never instructions: the prompt shows each of its
    lines quoted (`> `) under a line naming `source` (where it came from: "stored notes",
    "the user's profile"), and each line should carry its own provenance (id, origin, time).
    """

    heading: str
    body: str
    slot: str = "memory"  # "loaded" | "memory" | "recall" | "world"
    source: str = "memory"
    # optional: a token cap the runtime enforces on the body (a safety net; phases cap their
    # own sections), and a key under which only the first section (in phase order) is kept
    max_tokens: int | None = None
    dedupe_key: str | None = None


TRUNCATED_LINE = "[truncated]"


def fit_sections(sections: Sequence[PromptSection], count: Callable[[str], int]) -> list[PromptSection]:
    """Drop later sections whose `dedupe_key` was already seen; cut bodies over `max_tokens`
    line by line, ending them with a `[truncated]` line."""
    seen: set[str] = set()
    out: list[PromptSection] = []
    for section in sections:
        if section.dedupe_key is not None:
            if section.dedupe_key in seen:
                continue
            seen.add(section.dedupe_key)
        if section.max_tokens is not None and count(section.body) > section.max_tokens:
            kept: list[str] = []
            used = count(TRUNCATED_LINE) + 1
            for line in section.body.split("\n"):
                cost = count(line) + 1
                if used + cost > section.max_tokens:
                    break
                kept.append(line)
                used += cost
            section = attrs.evolve(section, body="\n".join([*kept, TRUNCATED_LINE]))
        out.append(section)
    return out


@attrs.frozen
class ExchangePair:
    """One complete user message and the reply that answered it."""

    user_text: str
    reply_text: str


HISTORY_PAIRS = 16  # earlier pairs a TurnStart / TurnDigest carries


def exchange_pairs(entries: Sequence[Any], before_turn: int, limit: int = HISTORY_PAIRS) -> tuple[ExchangePair, ...]:
    """The last `limit` complete user/reply pairs of turns before `before_turn`, oldest
    first: each user row paired with the next reply row; tool rows are skipped and a user
    row no reply followed is dropped. Reads from the end, so a long session costs no more."""
    pairs: list[ExchangePair] = []
    reply: str | None = None
    for entry in reversed(entries):
        if len(pairs) >= limit:
            break
        if entry.turn_index >= before_turn:
            continue
        if entry.kind == "assistant_reply":
            reply = entry.text
        elif entry.kind == "user":
            if reply is not None:
                pairs.append(ExchangePair(entry.text, reply))
            reply = None
    return tuple(reversed(pairs)) if limit > 0 else ()


@attrs.frozen
class TurnDigest:
    """What the hot path sees after a turn: the session, the user text and the reply.

    `reason` is how the turn ended ("reply", "finish", ...); `history` holds the session's
    earlier complete user/reply pairs, oldest first (at most HISTORY_PAIRS of them).
    """

    session_id: str
    turn_index: int
    user_text: str
    reply_text: str
    tool_summaries: Sequence[str] = ()
    reason: str = "reply"
    history: tuple[ExchangePair, ...] = ()


@attrs.frozen
class TurnStart:
    """What a phase sees when a turn begins, before its first step."""

    session_id: str
    turn_index: int
    user_text: str
    working_dir: str
    history: tuple[ExchangePair, ...] = ()  # earlier complete pairs, oldest first


@attrs.frozen
class MemoryPhase:
    """A memory phase. Every callable is optional; a missing one is skipped.

    - `sections(session_id, user_text)` — read path: tail sections for the next step.
    - `after_turn(digest)` — hot path, awaited off the turn's critical path.
    - `consolidate()` — cold path, called on the consolidation tick.
    - `before_turn(start)` — once per turn, before the first step: prefetch what the turn's
      sections show, abort stale background work of the same session. Synchronous.
    - `prepare_turn(start)` — once per turn, after every phase's before_turn and before the
      first step: awaited (a round trip the turn's sections depend on: embedding the
      message, rewriting the query). It must bound its own time; one that raises is
      reported and the turn goes on with what the sections have.
    - `turn_notices(session_id, turn_index)` — once per turn as it ends (whatever its
      status), after the reply is durable and before `turn_finished`: short texts for the
      person, never the model (the sandbox's worktree diffstat). Each is emitted as a
      `turn_notice` event {sessionId, turnIndex, source: the phase name, text} that every
      host shows beside the reply. Synchronous and quick; one that raises is reported and
      shows nothing.
    Phases run in (`order`, `name`) order.
    """

    name: str
    order: int = 100
    sections: Callable[[str, str], Sequence[PromptSection]] | None = None
    after_turn: Callable[[TurnDigest], Awaitable[object]] | None = None  # its result is not used
    consolidate: Callable[[], Awaitable[Any]] | None = None
    plugin: str = ""
    before_turn: Callable[[TurnStart], None] | None = None
    prepare_turn: Callable[[TurnStart], Awaitable[None]] | None = None
    turn_notices: Callable[[str, int], Sequence[str]] | None = None


# What a provider plugin registers: a kind of LLM backend and how to build one.

@attrs.frozen
class ProviderCapabilities:
    """What the agent loop may rely on for providers of this kind."""

    transport: str  # "grammar" (GBNF on /completion) | "native_tools" (OpenAI tools)
    slot_affinity: bool = False  # fixed slot ids keep a KV cache per session
    vision: bool = False
    embeddings: bool = False


@attrs.frozen
class ProviderKind:
    """A provider kind. `factory(entry, runtime)` builds a provider from one config entry.

    `entry` is the provider's config mapping (`llm.providers[]` item, or the synthesised
    local entry); `runtime` is the RuntimeView. The returned object implements the
    provider protocol in :mod:`atomic_agent.llm.provider_protocol`.

    `default_local` marks the kind a config without `llm.providers` runs on (one entry
    `{"id": "local", "kind": <it>}` is synthesised) and whose entries are the fallback
    chain's local last resort; at most one installed kind may claim it.
    """

    name: str
    factory: Callable[[dict[str, Any], Any], Any]
    capabilities: ProviderCapabilities
    summary: str = ""
    plugin: str = ""
    default_local: bool = False


# What a plugin registers to share an object with other plugins: a named service.

@attrs.frozen
class ServiceSpec:
    """A service `name` built by `factory(runtime)` the first time someone asks for it.

    `close(service)`, when given, runs once when the runtime closes (after
    `runtime_stopping`), for services that were built; it may be async. `multiple` marks a
    sink-style name several plugins may provide side by side (every provider must set it):
    `runtime.services(name)` returns them all, by plugin name.
    """

    name: str
    factory: Callable[[Any], Any]
    close: Callable[[Any], Awaitable[None] | None] | None = None
    summary: str = ""
    plugin: str = ""
    multiple: bool = False


# What a plugin contributes to `atomic-agent tui`: a panel (a tab), offered as a service.

TUI_PANEL_SERVICE = "tui_panel"


class TuiContext(Protocol):
    """What a TUI panel receives: the in-process runtime and the app's notice and job lanes.

    A panel's orchestrator is the only code of the panel that touches the runtime; widgets
    ask the orchestrator. `notify` shows a notice (severity "information", "warning" or
    "error"); `run_job` runs a coroutine off the UI loop with a progress notice titled
    `title`, and reports its failure as a notice instead of raising into the UI; `rows`
    makes the one rows widget every panel lists things with.
    """

    runtime: Any

    def notify(self, message: str, *, severity: str = "information") -> None: ...

    def run_job(self, title: str, job: Callable[[], Awaitable[Any]]) -> None: ...

    def rows(self, *, id: str | None = None) -> Any:
        """A new rows widget (a Textual `DataTable` with a row cursor) under the app's mouse
        contract: the first click on a row selects it, a click on the selected row activates
        it exactly as Enter does (`DataTable.RowSelected`), the wheel moves the cursor like
        the arrow keys. `selected_key()` is the key of the row under the cursor (None when
        empty). Every panel lists rows with it, so rows behave the same on every tab; a
        panel's own keys go in the panel's BINDINGS."""
        ...


@attrs.frozen
class TuiPanel:
    """A tab of `atomic-agent tui`, contributed by a plugin.

    A plugin offers it from `register_services` as `ServiceSpec(TUI_PANEL_SERVICE,
    factory=lambda runtime: TuiPanel(...), multiple=True)`. `build(context)` returns the
    panel's Textual widget (import Textual inside `build`, so a runtime without the TUI never
    loads it); `order` places the tab (lower first); `key` is an optional key binding that
    switches to it (e.g. "f6").
    """

    name: str
    title: str
    build: Callable[[TuiContext], Any]
    order: int = 100
    key: str | None = None


# What a plugin registers to have the runtime call it periodically: a named tick.

def _check_interval(_inst: object, _attr: attrs.Attribute[float], value: float) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"interval_s must be a positive number of seconds, got {value!r}")


@attrs.frozen
class TickSpec:
    """`run()` is awaited every `interval_s` seconds while the runtime runs.

    The runtime owns the timer: one tick of a name at a time (a tick still running when the
    next is due is not entered again; the timer waits for it), a tick that raises is counted
    and reported and the timer keeps going, and closing the runtime stops every tick before
    the plugins' services close.
    """

    name: str
    interval_s: float = attrs.field(validator=_check_interval)
    run: Callable[[], Awaitable[object]]
    summary: str = ""
    plugin: str = ""


# What a tool plugin registers: name, descriptor, schema, resource class, tier, runner.

class ResourceClass(str, enum.Enum):
    """How the batch executor may schedule a tool next to its siblings in one step."""

    PURE_READ = "pure_read"  # parallel within the group
    BROWSER = "browser"  # serial within the group
    MEMORY_WRITE = "memory_write"
    TASKS_WRITE = "tasks_write"
    VISION = "vision"
    FS_WRITE = "fs_write"
    APPROVAL_GATED = "approval_gated"  # must run solo
    TERMINAL = "terminal"  # reply / finish: only last in a batch
    UNKNOWN = "unknown"  # unregistered names: forbidden in batches (fail-closed)


class Tier(str, enum.Enum):
    """Where the stable prefix lists the tool: full schema (frequent) or one line (rare)."""

    FREQUENT = "frequent"
    RARE = "rare"


@attrs.frozen
class ToolResult:
    """The outcome of one tool call. `summary` goes to the prompt; `details` to traces."""

    status: str  # "ok" | "error" | "cancelled"
    summary: str
    details: Mapping[str, Any] = attrs.field(factory=dict)

    @classmethod
    def ok(cls, summary: str, **details: Any) -> ToolResult:
        return cls("ok", summary, details)

    @classmethod
    def error(cls, summary: str, **details: Any) -> ToolResult:
        return cls("error", summary, details)


ToolRunner = Callable[[Mapping[str, Any], "ToolContext"], Awaitable[ToolResult]]


def _check_resource_class(_inst: object, _attr: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, ResourceClass):
        raise TypeError(
            f"resource_class must be a ResourceClass, got {value!r}; every tool declares how it "
            "may be batched (see atomic_agent.api.ResourceClass)"
        )
    if value is ResourceClass.UNKNOWN:
        raise ValueError("resource_class 'unknown' is reserved for unregistered names")


@attrs.frozen
class ToolSpec:
    """A tool as a plugin registers it.

    `args_schema` is a JSON Schema object for the args; it feeds the prompt's full
    descriptors, argument validation and the OpenAI `tools` payload of cloud providers.
    `approval_category` names the ladder category a call asks under, or None when the
    tool never needs approval. `durable` says the call is safe to run again after a crash
    cut it off: it has no side effect (a read) or is idempotent. Only durable calls are
    re-run when an interrupted batch is settled; every other interrupted call is answered
    with an error, because its side effect may already have happened.
    """

    name: str
    summary: str
    args_schema: Mapping[str, Any]
    resource_class: ResourceClass = attrs.field(validator=_check_resource_class)
    run: ToolRunner
    tier: Tier = Tier.FREQUENT
    approval_category: str | None = None
    example: str | None = None  # one compact call example for the full descriptor
    durable: bool = False  # safe to re-run after a crash (read-only or idempotent)
    plugin: str = ""  # filled in by the core at registration
