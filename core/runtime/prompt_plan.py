"""What every step of every session shares until the server changes: the model profile,
the grammar, the context window, the template environment and the stable prefixes."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.app_config import AppConfig
from atomic_agent.grammar.build_grammar import build_tool_call_grammar
from atomic_agent.llm.model_profile import detect_profile, ModelProfile
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
from atomic_agent.tools.tool_registry import ToolRegistry

PROFILE_ENV = "ATOMIC_AGENT_MODEL_PROFILE"
SEED_ENV = "ATOMIC_AGENT_SEED"


@attrs.define
class PromptPlan:
    profile: ModelProfile
    grammar: str | None
    n_ctx: int | None
    n_predict: int
    env: Any
    registry: ToolRegistry
    max_calls: int
    temperature: float = 0.2
    seed: int | None = None
    tools_generation: int = 0  # the registry generation the grammar and prefixes were built from
    _prefixes: dict[Path, str] = attrs.field(factory=dict)

    def stable_prefix_for(self, working_dir: Path) -> str:
        """Byte-identical for every call with the same working dir (cached)."""
        if working_dir not in self._prefixes:
            self._prefixes[working_dir] = build_stable_prefix(self.env, self.registry, default_capabilities(working_dir),
                                                              max_calls=self.max_calls)
        return self._prefixes[working_dir]


def grammar_for(registry: ToolRegistry, profile: ModelProfile, max_calls: int) -> str:
    """The step grammar for the registry's current tools: reply/finish only as a batch of
    their own carrying their text, approval-asking tools alone, the rest batchable."""
    return build_tool_call_grammar(registry.names(), profile, max_calls, final_only=registry.terminal_text_args(),
                                   alone=registry.lone_names())


def with_current_tools(plan: PromptPlan) -> PromptPlan:
    """The plan rebuilt for the registry's current tool set (a live group changed): the same
    profile and server facts, a new tool-name alternation and fresh stable prefixes."""
    registry = plan.registry
    grammar = None if plan.grammar is None else grammar_for(registry, plan.profile, plan.max_calls)
    return attrs.evolve(plan, grammar=grammar, tools_generation=registry.generation, prefixes={})


async def plan_prompt(provider: Any, registry: ToolRegistry, config: AppConfig, env: Any,
                      environ: Mapping[str, str]) -> PromptPlan:
    facts = await provider.describe()
    profile = detect_profile(facts.get("chat_template"), facts.get("model_alias"), environ.get(PROFILE_ENV))
    n_ctx = await provider.context_window()
    max_calls = config.agent.max_parallel_tool_calls
    grammar = None
    if provider.capabilities.transport == "grammar":
        grammar = grammar_for(registry, profile, max_calls)
    seed = environ.get(SEED_ENV)
    return PromptPlan(profile=profile, grammar=grammar, n_ctx=n_ctx, n_predict=int(getattr(provider, "max_tokens", 512)),
                      env=env, registry=registry, max_calls=max_calls,
                      temperature=float(getattr(provider, "temperature", 0.2)), tools_generation=registry.generation,
                      seed=int(seed) if seed and seed.lstrip("-").isdigit() else None)
