"""What every step of every session shares until the server changes: the model profile,
the grammar, the context window, the template environment and the stable prefixes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.config.app_config import AppConfig
from atomic_agent.llm.model_profile import ModelProfile, detect_profile, profile_named
from atomic_agent.llm.provider_protocol import token_counter
from atomic_agent.prompt.build_grammar import build_tool_call_grammar
from atomic_agent.prompt.build_prompt import build_prompt, estimate_tokens
from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
from atomic_agent.prompt.prompt_style import COACHED, COACHED_STYLE, PromptStyle, resolve_prompt_style
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TURN_STARTED, USER, TranscriptEntry
from atomic_agent.tools.tool_registry import ToolRegistry

# `prompt show`: the exact prompt the next step would send, section by section.
#
# Works with no server reachable: the profile falls back to the configured override or
# plain framing, and token counts are estimated (and marked as such).

# Rebuild a session's framed stable prefix from the current runtime (for `trace replay`).
#
# The tools, templates, capabilities and config are today's; the model profile and framing
# are the ones the trace recorded, so a drift means the upper prompt changed, not that the
# server is down. The prompt style is the recorded one too (coached for traces from before
# styles existed, which is the only prompt they could have had).

def recorded_prompt(state_dir: Path, session_id: str) -> tuple[ModelProfile, str]:
    """(model profile, prompt style) of the session's last captured prompt."""
    path = state_dir / "traces" / f"{session_id}.ndjson"
    name, framing, style = "plain", "text", COACHED
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("type") == "prompt_captured" and event.get("profile"):
                name, framing = event["profile"], event.get("framing", "text")
                style = event.get("promptStyle") or COACHED
    return profile_named(name, chatml=framing == "chatml"), str(style)


def recorded_profile(state_dir: Path, session_id: str) -> ModelProfile:
    return recorded_prompt(state_dir, session_id)[0]


def rebuild_stable_prefix(state_dir: Path, session_id: str) -> str:
    from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.runtime.runtime import Runtime

    runtime = Runtime(boot(state_dir))
    profile, style = recorded_prompt(state_dir, session_id)
    try:
        session = runtime.sessions.load(session_id)
        prefix = build_stable_prefix(runtime.prompt_assets.env(), runtime.registry,
                                     default_capabilities(session.working_dir), skills=runtime.skill_lines(),
                                     max_calls=runtime.config.agent.max_parallel_tool_calls, style=style)
    finally:
        if runtime._sessions is not None:
            runtime._sessions.close()
    return profile.frame_stable_prefix(prefix)


@attrs.frozen
class PromptPreview:
    text: str
    sections: tuple[tuple[str, str, int], ...]  # (name, text, tokens)
    grammar: str | None
    estimated: bool
    profile: str
    server_note: str
    style: PromptStyle = COACHED_STYLE


async def _plan(runtime: Any) -> tuple[PromptPlan, str]:
    try:
        return await runtime.prompt_plan(), ""
    except Exception as exc:  # no server: still show the prompt, say so
        profile = detect_profile(None, None, runtime.environ.get(PROFILE_ENV))
        max_calls = runtime.config.agent.max_parallel_tool_calls
        grammar = grammar_for(runtime.registry, profile, max_calls)
        style = resolve_prompt_style(runtime.config.prompt.style, {"reachable": False})
        plan = PromptPlan(profile=profile, grammar=grammar,
                          n_ctx=None, n_predict=512, env=runtime.prompt_assets.env(),
                          registry=runtime.registry, max_calls=max_calls, style=style,
                          skills=runtime.skill_lines)
        return plan, f"server unreachable ({type(exc).__name__}: {exc}); profile and token counts are guesses"


async def preview_prompt(runtime: Any, session_id: str | None = None, message: str | None = None,
                         working_dir: Path | None = None) -> PromptPreview:
    plan, note = await _plan(runtime)
    if session_id:
        session = runtime.sessions.load(session_id)
    else:
        session = SessionState(id="preview", working_dir=working_dir or Path.cwd(), created_at="")
    if message is not None:
        turn = session.next_turn_index
        session = attrs.evolve(session, entries=[*session.entries, TranscriptEntry(TURN_STARTED, turn),
                                                 TranscriptEntry(USER, turn, text=message)])
    prefix = plan.stable_prefix_for(session.working_dir)
    built = build_prompt(env=plan.env, stable_prefix=prefix, profile=plan.profile, registry=runtime.registry,
                         session=session, agent=runtime.config.agent,
                         memory_sections=runtime.memory_sections(session.id, message or ""), n_ctx=plan.n_ctx,
                         n_predict=plan.n_predict, style=plan.style.name)
    estimated = bool(note)
    sections = []
    for name, text in built.sections:
        tokens = None if estimated else await _count(runtime, text)
        if tokens is None:
            estimated, tokens = True, estimate_tokens(text)
        sections.append((name, text, tokens))
    return PromptPreview(built.text, tuple(sections), plan.grammar, estimated, plan.profile.name, note, plan.style)


async def _count(runtime: Any, text: str) -> int | None:
    counter = token_counter(runtime.provider)
    if counter is None:
        return None
    try:
        tokens: int | None = await counter.count_tokens(text)
        return tokens
    except Exception:
        return None


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
    style: PromptStyle = COACHED_STYLE  # resolved from prompt.style and the model's facts
    # the `### skills` lines, asked for on every step (a skill installed, removed, enabled or
    # disabled shows at the next step: the one KV-cache invalidation the guide accepts)
    skills: Callable[[], Sequence[str]] = attrs.field(default=lambda: ())
    _prefixes: dict[tuple[Path, tuple[str, ...]], str] = attrs.field(factory=dict)

    def stable_prefix_for(self, working_dir: Path) -> str:
        """Byte-identical for every call with the same working dir and skills catalog (cached)."""
        skills = tuple(self.skills())
        key = (working_dir, skills)
        if key not in self._prefixes:
            if len(self._prefixes) > 64:  # catalogs changing many times in one process: keep it bounded
                self._prefixes.clear()
            self._prefixes[key] = build_stable_prefix(self.env, self.registry, default_capabilities(working_dir),
                                                      skills=skills, max_calls=self.max_calls, style=self.style.name)
        return self._prefixes[key]


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


def profile_from_facts(facts: Mapping[str, Any], environ: Mapping[str, str]) -> ModelProfile:
    """The model profile of a provider, from its `describe()` facts and the user's override."""
    return detect_profile(facts.get("chat_template"), facts.get("model_alias"), environ.get(PROFILE_ENV))


async def plan_prompt(provider: Any, registry: ToolRegistry, config: AppConfig, env: Any,
                      environ: Mapping[str, str], skills: Callable[[], Sequence[str]] = lambda: ()) -> PromptPlan:
    facts = await provider.describe()
    profile = profile_from_facts(facts, environ)
    n_ctx = await provider.context_window()
    max_calls = config.agent.max_parallel_tool_calls
    grammar = None
    if provider.capabilities.transport == "grammar":
        grammar = grammar_for(registry, profile, max_calls)
    seed = environ.get(SEED_ENV)
    return PromptPlan(profile=profile, grammar=grammar, n_ctx=n_ctx, n_predict=int(getattr(provider, "max_tokens", 512)),
                      env=env, registry=registry, max_calls=max_calls,
                      temperature=float(getattr(provider, "temperature", 0.2)), tools_generation=registry.generation,
                      seed=int(seed) if seed and seed.lstrip("-").isdigit() else None,
                      style=resolve_prompt_style(config.prompt.style, facts), skills=skills)
