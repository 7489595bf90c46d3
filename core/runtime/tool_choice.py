"""`tool_choice`: force the first step of a turn to call one named tool.

The counterpart of OpenAI's `tool_choice: {"function": ...}` for the grammar transport:
step 0's grammar admits only calls of that tool (one, or a batch when the tool may share one:
a tool that asks for approval runs alone, so its forced grammar admits exactly one call),
later steps get the session's normal grammar back. Useful for scripted runs ("read this
file, then answer") and for
small local models that otherwise answer straight away. Native-tools providers receive
the normal request (their own `tool_choice` is a provider setting).
"""

from __future__ import annotations

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


def step_grammar(plan_grammar: str | None, profile: ModelProfile, step: int, tool: str | None,
                 max_calls: int, registry: ToolRegistry) -> str | None:
    """The grammar for `step`: only `tool` on step 0 (grammar transport only); a tool that
    asks for approval is called once, as the batch rules require."""
    if tool is None or step != 0 or plan_grammar is None:
        return plan_grammar
    return build_tool_call_grammar([tool], profile, max_calls, alone=[tool] if registry.runs_alone(tool) else ())
