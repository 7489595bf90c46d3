"""`prompt show`: the exact prompt the next step would send, section by section.

Works with no server reachable: the profile falls back to the configured override or
plain framing, and token counts are estimated (and marked as such).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.llm.model_profile import detect_profile, ModelProfile, profile_named
from atomic_agent.prompt.build_prompt import build_prompt
from atomic_agent.prompt.estimate_tokens import estimate_tokens
from atomic_agent.runtime.prompt_plan import PROFILE_ENV, PromptPlan
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TURN_STARTED, USER, TranscriptEntry


# Rebuild a session's framed stable prefix from the current runtime (for `trace replay`).
#
# The tools, templates, capabilities and config are today's; the model profile and framing
# are the ones the trace recorded, so a drift means the upper prompt changed, not that the
# server is down.

def recorded_profile(state_dir: Path, session_id: str) -> ModelProfile:
    path = state_dir / "traces" / f"{session_id}.ndjson"
    name, framing = "plain", "text"
    if path.exists():
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if event.get("type") == "prompt_captured" and event.get("profile"):
                name, framing = event["profile"], event.get("framing", "text")
    return profile_named(name, chatml=framing == "chatml")


def rebuild_stable_prefix(state_dir: Path, session_id: str) -> str:
    from atomic_agent.prompt.build_stable_prefix import build_stable_prefix, default_capabilities
    from atomic_agent.runtime.boot_context import boot
    from atomic_agent.runtime.runtime import Runtime

    runtime = Runtime(boot(state_dir))
    try:
        session = runtime.sessions.load(session_id)
        prefix = build_stable_prefix(runtime.prompt_assets.env(), runtime.registry,
                                     default_capabilities(session.working_dir),
                                     max_calls=runtime.config.agent.max_parallel_tool_calls)
    finally:
        if runtime._sessions is not None:
            runtime._sessions.close()
    return recorded_profile(state_dir, session_id).frame_stable_prefix(prefix)


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
