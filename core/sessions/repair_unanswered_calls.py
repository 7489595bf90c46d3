"""Repair a conversation whose unanswered call is buried under later rows.

This happens when a turn died after committing its batch and neither its own failure
handling nor recovery settled it, and then the conversation went on. The model must
never see a call without its answer, and the answer belongs beside the call, so the
transcript is rewritten atomically (place_tool_results). Calls at the tail are left
alone: their batch may still be running, or recovery may yet re-run durable ones.
"""

from __future__ import annotations

import sys

from atomic_agent.hook_records import ToolResult
from atomic_agent.sessions.place_tool_results import place_tool_results
from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.settle_interrupted_calls import INTERRUPTED, result_row
from atomic_agent.sessions.unanswered_calls import is_stranded, unanswered_calls


def stranded_summary(tool: str) -> str:
    return (f"{tool} never returned a result: the turn that called it ended before it finished, so it may or "
            "may not have run; check before relying on it")


def repair_stranded_calls(store: SessionRepository, session: SessionState) -> int:
    """Answer every stranded call of `session` with an error result; returns how many."""
    open_calls = unanswered_calls(session.entries)
    if not open_calls:  # the common case: every load passes through here
        return 0
    running = store.running_turn_indexes(session.id)  # a live owner's batch is not stranded
    stranded = [c for c in open_calls if c.turn_index not in running and is_stranded(session.entries, c)]
    if not stranded:
        return 0
    return place_tool_results(store, session, [result_row(c, ToolResult.error(stranded_summary(c.tool or "the tool"),
                                                                              **{INTERRUPTED: True}))
                                               for c in stranded])


def repair_on_load(store: SessionRepository, session: SessionState) -> None:
    """`SessionStore.load`'s repair: a store that cannot be written right now (locked, full)
    still loads; the session is repaired by the next load that can write."""
    try:
        repair_stranded_calls(store, session)
    except Exception as exc:
        print(f"atomic-agent: session {session.id} has a tool call without its result and could not be repaired "
              f"now ({type(exc).__name__}: {exc}); it is repaired the next time the session loads", file=sys.stderr)
