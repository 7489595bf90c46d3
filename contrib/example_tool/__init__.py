"""Example tool plugin: `example.word_count` counts lines, words and characters of a text.

Copy this package to start your own plugin; CONTRIBUTING.md walks through it. It imports
only `atomic_agent.api`, like every plugin should.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from atomic_agent.api import ResourceClass, Tier, ToolContext, ToolResult, ToolSpec, hookimpl

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView

ARGS_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "The text to count."}},
    "required": ["text"],
    "additionalProperties": False,
}


async def count_words(args: Mapping[str, Any], ctx: ToolContext) -> ToolResult:
    text = args.get("text")
    if not isinstance(text, str):
        return ToolResult.error("args.text must be a string")
    lines, words, chars = len(text.splitlines()), len(text.split()), len(text)
    return ToolResult.ok(f"{lines} lines, {words} words, {chars} characters",
                         lines=lines, words=words, characters=chars)


@hookimpl
def register_tools(runtime: RuntimeView) -> Iterable[ToolSpec]:
    return [
        ToolSpec(
            name="example.word_count",
            summary="Count lines, words and characters of a text.",
            args_schema=ARGS_SCHEMA,
            resource_class=ResourceClass.PURE_READ,
            tier=Tier.RARE,
            run=count_words,
            example='{"tool": "example.word_count", "args": {"text": "a b c"}}',
        )
    ]
