"""`prompt show`: the exact prompt the next step would send, section by section.

Works with no server reachable: the profile falls back to the configured override or
plain framing, and token counts are estimated (and marked as such).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from atomic_agent.llm.detect_profile import detect_profile
from atomic_agent.prompt.build_prompt import build_prompt
from atomic_agent.prompt.estimate_tokens import estimate_tokens
from atomic_agent.runtime.prompt_plan import PROFILE_ENV, PromptPlan
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TURN_STARTED, USER, TranscriptEntry


@attrs.frozen
class PromptPreview:
    text: str
    sections: tuple[tuple[str, str, int], ...]  # (name, text, tokens)
    grammar: str | None
    estimated: bool
    profile: str
    server_note: str


async def _plan(runtime: Any) -> tuple[PromptPlan, str]:
    try:
        return await runtime.prompt_plan(), ""
    except Exception as exc:  # no server: still show the prompt, say so
        from atomic_agent.runtime.prompt_plan import grammar_for
        profile = detect_profile(None, None, runtime.environ.get(PROFILE_ENV))
        max_calls = runtime.config.agent.max_parallel_tool_calls
        grammar = grammar_for(runtime.registry, profile, max_calls)
        plan = PromptPlan(profile=profile, grammar=grammar,
                          n_ctx=None, n_predict=512, env=runtime.prompt_assets.env(),
                          registry=runtime.registry, max_calls=max_calls)
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
                         n_predict=plan.n_predict)
    estimated = bool(note)
    sections = []
    for name, text in built.sections:
        tokens = None if estimated else await _count(runtime, text)
        if tokens is None:
            estimated, tokens = True, estimate_tokens(text)
        sections.append((name, text, tokens))
    return PromptPreview(built.text, tuple(sections), plan.grammar, estimated, plan.profile.name, note)


async def _count(runtime: Any, text: str) -> int | None:
    try:
        return await runtime.provider.count_tokens(text)
    except Exception:
        return None
