"""What a memory plugin registers: one phase of the memory fabric."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs


@attrs.frozen
class PromptSection:
    """A `### <heading>` section of the prompt's variable tail.

    `slot` places it in mutability order: "memory" sections come before session-facts
    (profile, memory-index), "recall" sections after it (recalled notes).
    """

    heading: str
    body: str
    slot: str = "memory"  # "memory" | "recall"
    # optional: a token cap the runtime enforces on the body (a safety net; phases cap their
    # own sections), and a key under which only the first section (in phase order) is kept
    max_tokens: int | None = None
    dedupe_key: str | None = None


TRUNCATED_LINE = "[truncated]"


def fit_sections(sections: Sequence[PromptSection], count: Callable[[str], int]) -> list[PromptSection]:
    """Drop later sections whose `dedupe_key` was already seen; cut bodies over `max_tokens`
    line by line, ending them with a `[truncated]` line."""
    seen: set[str] = set()
    out: list[PromptSection] = []
    for section in sections:
        if section.dedupe_key is not None:
            if section.dedupe_key in seen:
                continue
            seen.add(section.dedupe_key)
        if section.max_tokens is not None and count(section.body) > section.max_tokens:
            kept: list[str] = []
            used = count(TRUNCATED_LINE) + 1
            for line in section.body.split("\n"):
                cost = count(line) + 1
                if used + cost > section.max_tokens:
                    break
                kept.append(line)
                used += cost
            section = attrs.evolve(section, body="\n".join([*kept, TRUNCATED_LINE]))
        out.append(section)
    return out


@attrs.frozen
class ExchangePair:
    """One complete user message and the reply that answered it."""

    user_text: str
    reply_text: str


@attrs.frozen
class TurnDigest:
    """What the hot path sees after a turn: the session, the user text and the reply.

    `reason` is how the turn ended ("reply", "finish", ...); `history` holds the session's
    earlier complete user/reply pairs, oldest first (at most HISTORY_PAIRS of them).
    """

    session_id: str
    turn_index: int
    user_text: str
    reply_text: str
    tool_summaries: Sequence[str] = ()
    reason: str = "reply"
    history: tuple[ExchangePair, ...] = ()


@attrs.frozen
class TurnStart:
    """What a phase sees when a turn begins, before its first step."""

    session_id: str
    turn_index: int
    user_text: str
    working_dir: str
    history: tuple[ExchangePair, ...] = ()  # earlier complete pairs, oldest first


@attrs.frozen
class MemoryPhase:
    """A memory phase. Every callable is optional; a missing one is skipped.

    - `sections(session_id, user_text)` — read path: tail sections for the next step.
    - `after_turn(digest)` — hot path, awaited off the turn's critical path.
    - `consolidate()` — cold path, called on the consolidation tick.
    - `before_turn(start)` — once per turn, before the first step: prefetch what the turn's
      sections show, abort stale background work of the same session. Synchronous.
    - `prepare_turn(start)` — once per turn, after every phase's before_turn and before the
      first step: awaited (a sub-call the turn's sections depend on, such as a query
      rewrite). It must bound its own time; a raising one is reported and ignored.
    Phases run in (`order`, `name`) order.
    """

    name: str
    order: int = 100
    sections: Callable[[str, str], Sequence[PromptSection]] | None = None
    after_turn: Callable[[TurnDigest], Awaitable[None]] | None = None
    consolidate: Callable[[], Awaitable[Any]] | None = None
    plugin: str = ""
    before_turn: Callable[[TurnStart], None] | None = None
    prepare_turn: Callable[[TurnStart], Awaitable[None]] | None = None


HISTORY_PAIRS = 16  # earlier pairs a TurnStart / TurnDigest carries


def exchange_pairs(entries: Sequence[Any], before_turn: int, limit: int = HISTORY_PAIRS) -> tuple[ExchangePair, ...]:
    """The last `limit` complete user/reply pairs of turns before `before_turn`, oldest
    first: each user row paired with the next reply row; tool rows are skipped and a user
    row no reply followed is dropped."""
    pairs: list[ExchangePair] = []
    pending: str | None = None
    for entry in entries:
        if entry.turn_index >= before_turn:
            continue
        if entry.kind == "user":
            pending = entry.text
        elif entry.kind == "assistant_reply" and pending is not None:
            pairs.append(ExchangePair(pending, entry.text))
            pending = None
    return tuple(pairs[-limit:]) if limit > 0 else ()
