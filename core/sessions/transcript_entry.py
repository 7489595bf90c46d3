"""One row of a session transcript.

Rows are appended, never updated in place. Two rewrites exist, each one transaction:
settling places a missing tool result beside its call, and compaction replaces the rows
up to a boundary with one `compaction` row.
"""

from __future__ import annotations

from typing import Any

import attrs

# kinds of transcript rows, in the order a turn produces them
USER = "user"
TOOL_CALL = "assistant_tool_call"
TOOL_RESULT = "tool_result"
REPLY = "assistant_reply"
TURN_STARTED = "turn_started"
TURN_FINISHED = "turn_finished"
FAILURE_NOTE = "failure_note"  # "The last turn failed: ..." so the next inference sees it
COMPACTION = "compaction"  # a provider-written summary standing in for the rows it replaced


@attrs.frozen
class TranscriptEntry:
    """A user message, a tool call or result, a reply, or a turn boundary marker."""

    kind: str
    turn_index: int
    text: str = ""
    tool: str | None = None
    args: dict[str, Any] | None = None
    status: str | None = None  # tool_result: ok | error | cancelled; turn_finished: the turn state
    reason: str | None = None  # turn_finished: reply | finish | cancelled | failed | max_steps
    reasoning: str | None = None
    details: dict[str, Any] | None = None
    step: int | None = None
    batch_index: int | None = None
    created_at: str = ""
    seq: int = -1
