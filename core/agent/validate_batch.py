"""Reject batches the executor must not run: misplaced terminals, gated tools, unknowns, too
many, and a terminal call whose args break its schema.

A rejected batch is treated like a parse failure (one re-ask, then a grammar error).
A length-1 batch skips the batch-shape checks (any tool may run solo), but never the
terminal's own args: a `reply` without text (`{"tool": "reply", "args": {}}`) or with only
whitespace would end the turn with an empty answer reported as success.
"""

from __future__ import annotations

from collections.abc import Sequence

from atomic_agent.agent.tool_call import ToolCall
from atomic_agent.records.tool_spec import ResourceClass
from atomic_agent.tools.tool_registry import ToolRegistry
from atomic_agent.tools.validate_args import args_errors

class BatchValidationError(ValueError):
    """Why a batch was rejected, one reason per offending call."""

    def __init__(self, reasons: Sequence[str], raw_preview: str = "") -> None:
        super().__init__("; ".join(reasons))
        self.reasons = list(reasons)
        self.raw_preview = raw_preview


def batch_problems(calls: Sequence[ToolCall], registry: ToolRegistry, max_calls: int) -> list[str]:
    if len(calls) <= 1:
        return []
    problems: list[str] = []
    if len(calls) > max_calls:
        problems.append(f"{len(calls)} calls exceed agent.maxParallelToolCalls={max_calls}")
    last = len(calls) - 1
    for index, call in enumerate(calls):
        cls = registry.resource_class(call.tool)
        if cls is ResourceClass.TERMINAL and index != last:
            problems.append(f"call {index}: terminal {call.tool!r} may only be the last call")
        elif registry.runs_alone(call.tool):
            problems.append(f"call {index}: {call.tool!r} asks for approval and must be the only call")
        elif cls is ResourceClass.UNKNOWN:
            problems.append(f"call {index}: {call.tool!r} is not a registered tool")
    return problems


def terminal_problems(calls: Sequence[ToolCall], registry: ToolRegistry) -> list[str]:
    """Problems with the args of the batch's terminal call (reply/finish), at any batch size."""
    if not calls or registry.resource_class(calls[-1].tool) is not ResourceClass.TERMINAL:
        return []
    call, index = calls[-1], len(calls) - 1
    spec = registry.get(call.tool)
    problems = [f"call {index}: {call.tool!r} {problem}" for problem in args_errors(spec.args_schema, call.args)] \
        if spec is not None else []
    text_key = "text" if call.tool == "reply" else "summary" if call.tool == "finish" else None
    value = call.args.get(text_key) if text_key else None
    if not problems and text_key and isinstance(value, str) and not value.strip():
        problems.append(f"call {index}: {call.tool!r} {text_key} is empty; say something to the user")
    return problems


def validate_batch(calls: Sequence[ToolCall], registry: ToolRegistry, max_calls: int) -> None:
    problems = batch_problems(calls, registry, max_calls) + terminal_problems(calls, registry)
    if problems:
        raise BatchValidationError(problems)
