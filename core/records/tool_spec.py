"""What a tool plugin registers: name, descriptor, schema, resource class, tier, runner."""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from atomic_agent.records.tool_context import ToolContext


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


def _check_resource_class(_inst: object, _attr: attrs.Attribute, value: object) -> None:
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
