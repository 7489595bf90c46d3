"""memory.profile.set | remove | list | history — every write goes through ProfileStore.set."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec

SET_SCHEMA = {
    "type": "object",
    "properties": {
        "key": {"type": "string", "description": "snake_case name, e.g. preferred_language"},
        "value": {"type": "string", "description": "one line, at most 200 characters"},
        "pinned": {"type": "boolean", "description": "false: shown only when a keyword occurs"},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "supersedes": {"type": "string", "description": "another key this fact replaces"},
    },
    "required": ["key", "value"],
    "additionalProperties": False,
}
KEY_SCHEMA = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"],
              "additionalProperties": False}
EMPTY_SCHEMA = {"type": "object", "properties": {}, "additionalProperties": False}


def _line(fact: Any) -> str:
    gate = "" if fact.pinned else f" [contextual: {', '.join(fact.keywords)}]"
    return f"{fact.key}: {fact.value}{gate}"


def history_line(fact: Any) -> str:
    """` * [#id] time: value (active)` or `[#id] time: value → #next`."""
    when = fact.to_json()["validFrom"]
    if fact.active:
        return f" * [#{fact.id}] {when}: {fact.value} (active)"
    return f"[#{fact.id}] {when}: {fact.value} → #{fact.superseded_by}"


def profile_tool_specs(runtime: RuntimeView) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec
    from atomic_agent.plugins.memory.memory_contract import MEMORY_SERVICE

    def store() -> Any:
        return runtime.service(MEMORY_SERVICE).profile_store()

    def guarded(fn: Callable[[Mapping[str, Any]], ToolResult]) -> Callable[[Mapping[str, Any], Any], Awaitable[Any]]:
        async def run(args: Mapping[str, Any], ctx: Any) -> Any:
            try:
                return fn(args)
            except Exception as exc:
                if isinstance(exc, runtime.service(MEMORY_SERVICE).StoreError):  # validation, lock, refusal: results
                    return ToolResult.error(str(exc), errorType=type(exc).__name__)
                raise
        return run

    def set_fact(args: Mapping[str, Any]) -> Any:
        outcome = store().apply(args.get("key"), args.get("value"), pinned=args.get("pinned", True),
                                keywords=args.get("keywords"), supersedes_key=args.get("supersedes"), source="tool")
        fact = outcome.fact
        if not outcome.changed:
            return ToolResult.ok(f"unchanged: {_line(fact)} (#{fact.id})", fact=fact.to_json())
        replaced = f" (replaces {', '.join(f'#{i}' for i in outcome.superseded)})" if outcome.superseded else ""
        return ToolResult.ok(f"saved #{fact.id} {_line(fact)}{replaced}", fact=fact.to_json())

    def remove_fact(args: Mapping[str, Any]) -> Any:
        key = args.get("key")
        if not store().remove(key):
            return ToolResult.error(f"no active profile fact {key!r}; memory.profile.list shows the keys")
        return ToolResult.ok(f"removed {key}; its history is kept (memory.profile.history)")

    def list_facts(args: Mapping[str, Any]) -> Any:
        facts = store().list()
        if not facts:
            return ToolResult.ok("no profile facts yet", facts=[])
        return ToolResult.ok("\n".join(f"#{f.id} {_line(f)}" for f in facts), facts=[f.to_json() for f in facts])

    def history(args: Mapping[str, Any]) -> Any:
        key = args.get("key")
        chain = store().history(key)
        if not chain:
            return ToolResult.error(f"no profile history for {key!r}; memory.profile.list shows the keys")
        return ToolResult.ok("\n".join(history_line(f) for f in chain), history=[f.to_json() for f in chain])

    return [
        ToolSpec("memory.profile.set", "Remember a durable fact about the user (replaces the old value; history kept).",
                 SET_SCHEMA, ResourceClass.MEMORY_WRITE, guarded(set_fact),
                 example='{"tool": "memory.profile.set", "args": {"key": "preferred_language", "value": "English"}}'),
        ToolSpec("memory.profile.remove", "Forget the current value of a profile fact (history is kept).", KEY_SCHEMA,
                 ResourceClass.MEMORY_WRITE, guarded(remove_fact), tier=Tier.RARE),
        ToolSpec("memory.profile.list", "List the active profile facts.", EMPTY_SCHEMA, ResourceClass.PURE_READ,
                 guarded(list_facts), tier=Tier.RARE),
        ToolSpec("memory.profile.history", "Show every past value of one profile fact, oldest first.", KEY_SCHEMA,
                 ResourceClass.PURE_READ, guarded(history), tier=Tier.RARE),
    ]
