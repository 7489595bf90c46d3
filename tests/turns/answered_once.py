"""Read a state directory the way a fresh process would and say, per accepted message, whether
it was answered exactly once: the check behind every SIGTERM/restart test."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import attrs


@attrs.frozen
class Conversation:
    """A message counts as answered when a reply follows it in its session: a turn interrupted
    with turns queued behind it is answered by the next of those (they read the durable
    conversation, its message and failure note included), after SIGTERM as after SIGKILL."""

    users: Counter[str]  # user message text -> how many times it is in the conversation
    answered: dict[str, int]  # user message text -> replies after it in its session
    live_turns: list[tuple[str, str]]  # (text, state) of turns still queued or running


def read_conversation(state_dir: Path) -> Conversation:
    conn = sqlite3.connect(f"file:{state_dir / 'sessions.sqlite'}?mode=ro", uri=True)
    try:
        rows = conn.execute("select session_id, kind, text from transcript order by session_id, seq").fetchall()
        live = conn.execute("select text, state from turns where state in ('queued', 'running')").fetchall()
    finally:
        conn.close()
    users: Counter[str] = Counter()
    answered: dict[str, int] = {}
    waiting: dict[str, list[str]] = {}  # session -> its messages seen so far
    for session_id, kind, text in rows:
        if kind == "user":
            users[text] += 1
            answered.setdefault(text, 0)
            waiting.setdefault(session_id, []).append(text)
        elif kind == "assistant_reply":
            for earlier in waiting.get(session_id, []):
                answered[earlier] += 1
    return Conversation(users, answered, [(t, s) for t, s in live])


def unanswered_or_doubled(state_dir: Path, texts: list[str]) -> list[str]:
    """Problems with `texts` (each must be in the conversation once, with an answer after it)."""
    seen = read_conversation(state_dir)
    problems = [f"{t!r} is in the conversation {seen.users[t]} times" for t in texts if seen.users[t] != 1]
    problems += [f"{t!r} was never answered" for t in texts if seen.users[t] == 1 and not seen.answered.get(t)]
    problems += [f"turn for {t!r} is still {s}" for t, s in seen.live_turns]
    return problems
