"""Assemble one step's prompt: the stable prefix, then the tail in mutability order.

Tail order: loaded sections (skills), loaded-tools, memory sections, session-facts, recall sections, world,
earlier-conversation (the summary a compaction left, if any), conversation, notice, respond
(tail_context.j2 holds all but the last, which is each prompt style's own).
Tool results older than the latest batch are folded to one line each (older_tool_result.j2).
Caps come from the agent config; the conversation cap is
clamped to the room the server's context window leaves.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Sequence
from datetime import date
from typing import Any

import attrs

from atomic_agent.config.app_config import AgentConfig
from atomic_agent.hook_records import PromptSection
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.prompt.conversation_lines import USER_PREFIX
from atomic_agent.prompt.conversation_window import ConversationIndex, latest_compaction_text, pack_recent_turns
from atomic_agent.prompt.describe_tool import describe_full
from atomic_agent.prompt.pack_conversation import TRUNCATED
from atomic_agent.prompt.prompt_style import COACHED, templates_of
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import COMPACTION, REPLY, TOOL_RESULT, USER, TranscriptEntry
from atomic_agent.tools.tool_registry import ToolRegistry

NO_WORLD = "no world snapshot available"
SAFETY_TOKENS = 64
_REPACK_ATTEMPTS = 3


def estimate_tokens(text: str) -> int:
    """A cheap token count for when no tokenizer is reachable (budgets, marked as estimated):
    max(chars / 3.6, words * 1.4), rounded up — it errs high, so budgets stay safe."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 3.6), math.ceil(len(text.split()) * 1.4))


@attrs.frozen
class BuiltPrompt:
    """The prompt text plus its parts. `framed_prefix` is the byte-stable leading part."""

    stable_prefix: str
    tail: str
    text: str
    framed_prefix: str
    sections: tuple[tuple[str, str], ...]
    dropped_turns: int = 0


# extensions that make a word of the request a file name worth reading first
FILE_KINDS = ("txt", "md", "py", "json", "csv", "toml", "yaml", "yml", "log", "ini", "cfg", "conf", "js", "ts",
              "html", "css", "sh", "rs", "go", "c", "h", "java", "rb", "xml", "sql", "env")


def _cap_lines(lines: list[str], max_tokens: int, count: Callable[[str], int]) -> list[str]:
    out, used = [], 0
    for line in lines:
        cost = count(line) + 1
        if used + cost > max_tokens:
            out.append(TRUNCATED)
            break
        out.append(line)
        used += cost
    return out


def earlier_summary(entries: Sequence[TranscriptEntry]) -> str:
    """The text of the latest compaction row: what the conversation before it said."""
    return next((e.text for e in reversed(entries) if e.kind == COMPACTION), "")


def latest_batch_failed(entries: Sequence[TranscriptEntry]) -> bool:
    """Whether a call of the batch the model is about to act on failed: the newest tool results,
    with no user message or reply after them. Older batches are history, not news."""
    batch: tuple[int, int | None] | None = None
    failed = False
    for entry in reversed(entries):
        if entry.kind in (USER, REPLY):
            break
        if entry.kind != TOOL_RESULT:
            continue
        key = (entry.turn_index, entry.step)
        if batch is None:
            batch = key
        elif key != batch:
            break
        failed = failed or entry.status != "ok"
    return failed


LOADED_SLOT = "loaded"  # PromptSection.slot of what opens the tail: skill bodies loaded by skill.view
WORLD_SLOT = "world"  # PromptSection.slot of the `### world` body (the browser's page snapshot)


def fit_shared_budget(sections: Sequence[PromptSection], budget: int,
                      count: Callable[[str], int]) -> list[PromptSection]:
    """Sections in order while their bodies fit `budget` tokens together; the first that does
    not fit is cut line by line (ending in a `[truncated]` line) and the rest are left out."""
    out: list[PromptSection] = []
    left = budget
    for section in sections:
        cost = count(section.body) + count(section.heading) + 2
        if cost <= left:
            out.append(section)
            left -= cost
            continue
        room = left - count(section.heading) - 2
        if room > count(TRUNCATED) + 8:
            out.append(attrs.evolve(section, body="\n".join(_cap_lines(section.body.split("\n"), room, count))))
        break
    return out


def split_sections(tail: str) -> list[tuple[str, str]]:
    """`### name` sections of a rendered tail, in order (for token accounting)."""
    sections: list[tuple[str, str]] = []
    for chunk in tail.split("### ")[1:]:
        name = chunk.split("\n", 1)[0].strip()
        sections.append((name, "### " + chunk))
    return sections


def build_prompt(*, env: Any, stable_prefix: str, profile: ModelProfile, registry: ToolRegistry,
                 session: SessionState, agent: AgentConfig, memory_sections: Sequence[PromptSection] = (),
                 notices: Sequence[str] = (), world: str = NO_WORLD, n_ctx: int | None = None,
                 n_predict: int = 512, today: date | None = None,
                 count: Callable[[str], int] = estimate_tokens,
                 conversations: ConversationIndex | None = None, style: str = COACHED) -> BuiltPrompt:
    """One step's prompt. `conversations` is the runtime's index of where each session's turns
    start (and their rendered lines), so a step reads only the turns that can still fit.
    `style` (coached or full) picks the tail template; the stable prefix must be of the same style."""
    loaded = [describe_full(s) for name in session.loaded_tools if (s := registry.get(name)) is not None]
    loaded = _cap_lines(loaded, agent.loaded_tools_max_tokens, count) if loaded else []
    facts = _cap_lines(list(session.known_facts), agent.token_budget, count) if session.known_facts else []
    # loaded skill bodies share agent.tokenBudget with the session facts: the facts (short,
    # about this session) are kept first, the skills get what is left
    loaded_skills = fit_shared_budget([s for s in memory_sections if s.slot == LOADED_SLOT],
                                      agent.token_budget - sum(count(f) + 1 for f in facts), count)
    index = (conversations or ConversationIndex(size=1)).for_entries(session.id, session.entries)
    # a plugin's world section (slot "world", the last one wins) replaces the `world` argument
    # and is quoted as data under its source: a page's text is never instructions
    world_section = next((s for s in reversed(memory_sections) if s.slot == WORLD_SLOT), None)
    if world_section is not None:
        world = world_section.body
    world_lines = _cap_lines(world.splitlines() or [NO_WORLD], agent.world_snapshot_max_tokens, count)
    context: dict[str, Any] = {
        "loaded_sections": loaded_skills,
        "loaded_tools": loaded,
        "memory_sections": [s for s in memory_sections if s.slot not in ("recall", LOADED_SLOT, WORLD_SLOT)],
        "recall_sections": [s for s in memory_sections if s.slot == "recall"],
        "session_facts": facts,
        "world": "\n".join(world_lines),
        "world_source": world_section.source if world_section is not None else "",
        "notices": list(dict.fromkeys(notices)),  # deduplicated, first occurrence order
        "today": (today or date.today()).isoformat(),
        "conversation": [],
        "request": "",
        "earlier_summary": latest_compaction_text(index, session.entries),
        "tools": registry.names(),  # the tail may only point at tools that are registered
        "file_kinds": FILE_KINDS,
        "latest_batch_failed": latest_batch_failed(session.entries),
        # memory sections and multi-line tool results are quoted as data (reference_data); a
        # template override may set it false (the injection evaluation's baseline does)
        "frame_data": True,
    }
    template = env.get_template(templates_of(style)[1])
    framed_prefix = profile.frame_stable_prefix(stable_prefix)
    fixed_cost = count(framed_prefix) + count(template.render(**context)) + count(profile.prompt_ending)
    cap = agent.conversation_max_tokens
    if loaded:
        cap -= agent.loaded_tools_max_tokens
    if n_ctx:
        cap = min(cap, n_ctx - fixed_cost - n_predict - SAFETY_TOKENS)
    older = env.get_template("older_tool_result.j2")
    pack = pack_recent_turns(session.entries, index, max(cap, 16), count, agent.batch_tool_result_char_cap,
                             fold=lambda e: older.render(tool=e.tool, status=e.status, text=e.text).strip("\n"),
                             render_key=(agent.batch_tool_result_char_cap, older, count))
    for _ in range(_REPACK_ATTEMPTS):
        conversation, dropped = pack(max(cap, 16))
        context["conversation"] = conversation
        # found here, not by the template: a loop over every line in Jinja was most of the build
        context["request"] = next((line[len(USER_PREFIX):] for line in reversed(conversation)
                                   if line.startswith(USER_PREFIX)), "")
        tail = template.render(**context)
        text = profile.frame_prompt(stable_prefix, tail)
        # the tail may restate conversation content (the request, the latest result), which the
        # fixed cost above could not see: measure the rendered prompt and pack tighter if it overflows
        overflow = count(text) + n_predict + SAFETY_TOKENS - n_ctx if n_ctx else 0
        if overflow <= 0 or cap <= 16:
            break
        cap -= overflow
    sections = (("stable-prefix", framed_prefix), *split_sections(tail))
    return BuiltPrompt(stable_prefix=stable_prefix, tail=tail, text=text, framed_prefix=framed_prefix,
                       sections=sections, dropped_turns=dropped)


# The estimate reads chars/3.6, which a tokenizer beats on dense text (paths, JSON, code: nearer
# 2.5 chars a token), so a prompt built to the estimate can still overflow the server's window.
# Near the limit the prompt is measured exactly and, if it overflows, rebuilt with the estimate
# scaled by the measured ratio; far from it no tokenize round trip is spent.
_MEASURE_FROM = 0.5  # share of the room at which the estimate is no longer trusted
_FIT_ATTEMPTS = 3


async def fit_to_context(build: Callable[[Callable[[str], int]], BuiltPrompt],
                         exact_count: Callable[[str], Awaitable[int | None]] | None,
                         n_ctx: int | None, n_predict: int) -> BuiltPrompt:
    """`build(count)` measured against the window: the prompt plus `n_predict` plus a margin
    stays within `n_ctx` whenever trimming the conversation can make it so. Without a window or
    a tokenizer the estimate is all there is, and the prompt is the estimate's build."""
    prompt = build(estimate_tokens)
    if not n_ctx or exact_count is None:
        return prompt
    room = n_ctx - n_predict - SAFETY_TOKENS
    ratio = 1.0
    for _ in range(_FIT_ATTEMPTS):
        estimated = estimate_tokens(prompt.text)
        if estimated * ratio < room * _MEASURE_FROM:
            return prompt
        exact = await exact_count(prompt.text)
        if exact is None or exact <= room:
            return prompt
        ratio = max(ratio * 1.05, exact / max(estimated, 1) * 1.05)
        scale = ratio

        def scaled(text: str, scale: float = scale) -> int:
            return math.ceil(estimate_tokens(text) * scale)

        prompt = build(scaled)
    return prompt
