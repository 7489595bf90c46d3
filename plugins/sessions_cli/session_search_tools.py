"""`sessions.search {query}` and `sessions.open {id}`: the agent reads the user's own past sessions.

Both are read-only and scoped: a session reads only sessions of its own channel (a Telegram
chat cannot read a serve client's sessions, nor the reverse) unless the operator lists more
channels in `sessionSearch.channels`. What they return is data from old conversations, shown as
a tool result (quoted in the prompt, never instructions), each line with its provenance.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView, ToolSpec

SEARCH_SCHEMA = {
    "type": "object",
    "properties": {"query": {"type": "string", "description": "words said in the session you look for"},
                   "limit": {"type": "integer", "minimum": 1, "maximum": 20}},
    "required": ["query"],
    "additionalProperties": False,
}
OPEN_SCHEMA = {"type": "object", "properties": {"id": {"type": "string", "description": "a session id from sessions.search"}},
               "required": ["id"], "additionalProperties": False}
DEFAULT_LIMIT = 5
OPEN_MAX_CHARS = 12_000  # a hydrated session is capped: the newest turns are kept
LINE_MAX_CHARS = 600  # one row's text in a hydrated session
KINDS_SHOWN = {"user": "user", "assistant_reply": "assistant"}


def readable_channels(runtime: RuntimeView, session_id: str, extra: Sequence[str]) -> set[str]:
    """The channels a session may read: its own, plus those the operator configured."""
    return {runtime.sessions.channel(session_id), *extra}


def search_lines(hits: Sequence[Any]) -> str:
    """`[session id · turn N · when · kind] snippet` per hit."""
    return "\n".join(f"[{h.session_id} · turn {h.turn_index} · {h.created_at[:16]} · {h.kind}] {h.snippet}"
                     for h in hits)


def transcript_text(session_id: str, created_at: str, entries: Sequence[Any], max_chars: int) -> str:
    """What was said in a session, one line per user message and reply (`turn N user: ...`),
    capped at `max_chars` by dropping the oldest turns (a line says how many)."""
    lines = []
    for entry in entries:
        role = KINDS_SHOWN.get(entry.kind)
        if role is None or not entry.text:
            continue
        text = " ".join(str(entry.text).split())
        if len(text) > LINE_MAX_CHARS:
            text = text[: LINE_MAX_CHARS - 1] + "…"
        lines.append(f"turn {entry.turn_index} {role}: {text}")
    head = f"session {session_id} (started {created_at[:16]}), {len(lines)} lines"
    kept: list[str] = []
    used = len(head) + 1
    for line in reversed(lines):
        if used + len(line) + 1 > max_chars:
            break
        kept.append(line)
        used += len(line) + 1
    kept.reverse()
    if len(kept) < len(lines):
        head += f"; the oldest {len(lines) - len(kept)} lines are left out (cap {max_chars} chars)"
    return "\n".join([head, *kept])


def session_search_tool_specs(runtime: RuntimeView, extra_channels: Sequence[str] = ()) -> list[ToolSpec]:
    from atomic_agent.api import ResourceClass, Tier, ToolResult, ToolSpec

    async def search(args: Mapping[str, Any], ctx: Any) -> Any:
        from atomic_agent.api import SessionNotFoundError

        query = args.get("query")
        if not isinstance(query, str):
            return ToolResult.error("query must be text: words said in the session you look for")
        limit = args.get("limit", DEFAULT_LIMIT)
        if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit <= 20:
            return ToolResult.error(f"limit must be an integer 1..20, got {limit!r}")
        try:
            channels = readable_channels(runtime, ctx.session_id, extra_channels)
            hits = runtime.sessions.search(query, channels=channels, exclude_session=ctx.session_id, limit=limit)
        except ValueError as exc:  # SearchQueryError: nothing to search for
            return ToolResult.error(str(exc))
        except SessionNotFoundError as exc:
            return ToolResult.error(str(exc))
        if not hits:
            return ToolResult.ok(f"no past session of this channel mentions {str(query)[:80]!r}", hits=[])
        return ToolResult.ok(f"{len(hits)} past session turns match (sessions.open {{id}} reads one)\n"
                             + search_lines(hits), hits=[h.to_json() for h in hits])

    async def open_session(args: Mapping[str, Any], ctx: Any) -> Any:
        wanted = args.get("id")
        if not isinstance(wanted, str) or not wanted.strip():
            return ToolResult.error("id must be a session id string from sessions.search")
        if wanted == ctx.session_id:
            return ToolResult.error("that is this session; its conversation is already in front of you")
        # one answer for "absent" and "not yours": an id of another channel reveals nothing
        refused = ToolResult.error(f"no session {wanted[:80]!r} that this session may read; sessions.search finds them")
        if not runtime.sessions.exists(wanted):
            return refused
        if runtime.sessions.channel(wanted) not in readable_channels(runtime, ctx.session_id, extra_channels):
            return refused
        state = runtime.sessions.load(wanted)
        return ToolResult.ok(transcript_text(state.id, state.created_at, state.entries, OPEN_MAX_CHARS),
                             sessionId=state.id)

    return [
        ToolSpec("sessions.search", "Search the user's own past sessions (what was said) by words; returns session "
                 "ids, turns and matching snippets.", SEARCH_SCHEMA, ResourceClass.PURE_READ, search, tier=Tier.RARE,
                 durable=True, example='{"tool": "sessions.search", "args": {"query": "staging database port"}}'),
        ToolSpec("sessions.open", "Read one past session found by sessions.search: its user messages and replies, "
                 "newest kept when long.", OPEN_SCHEMA, ResourceClass.PURE_READ, open_session, tier=Tier.RARE,
                 durable=True),
    ]
