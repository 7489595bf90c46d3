"""`tool_choice`: force the first step of a turn to call one named tool.

The counterpart of OpenAI's `tool_choice: {"function": ...}` for the grammar transport:
step 0's grammar admits only calls of that tool (one, or a batch when the tool may share one:
a tool that asks for approval runs alone, so its forced grammar admits exactly one call),
later steps get the session's normal grammar back. Useful for scripted runs ("read this file, then answer") and for
small local models that otherwise answer straight away. Native-tools providers receive
the normal request (their own `tool_choice` is a provider setting).
"""

from __future__ import annotations

from atomic_agent.agent.validate_batch import FORBIDDEN_IN_BATCH
from atomic_agent.grammar.build_grammar import build_tool_call_grammar
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.tools.tool_registry import ToolRegistry


class UnknownToolChoiceError(ValueError):
    pass


def check_tool_choice(registry: ToolRegistry, tool: str | None) -> None:
    """Refuse an unknown name before anything is admitted, naming what exists."""
    if tool is not None and tool not in registry:
        raise UnknownToolChoiceError(
            f"--tool-choice {tool!r} is not a registered tool; `atomic-agent tools list` shows the names")


def forced_batch_limit(registry: ToolRegistry, tool: str | None, max_calls: int) -> int:
    """How many calls of the forced `tool` step 0 may make: 1 for a tool that must run alone
    (approval-gated, or carrying an approval category), else the session's batch limit. A
    grammar that admitted a batch of such a tool would only produce batches the validator
    rejects."""
    spec = registry.get(tool) if tool is not None else None
    if spec is None or spec.resource_class in FORBIDDEN_IN_BATCH or spec.approval_category:
        return 1
    return max_calls


def step_grammar(plan_grammar: str | None, profile: ModelProfile, step: int, tool: str | None,
                 max_calls: int) -> str | None:
    """The grammar for `step`: only `tool` on step 0 (grammar transport only)."""
    if tool is None or step != 0 or plan_grammar is None:
        return plan_grammar
    return build_tool_call_grammar([tool], profile, max_calls)
