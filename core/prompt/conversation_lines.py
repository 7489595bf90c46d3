"""Render transcript rows as the prompt's `### conversation` lines, grouped by turn."""

from __future__ import annotations

import json
from collections.abc import Sequence

from atomic_agent.sessions.transcript_entry import REPLY, TOOL_CALL, TOOL_RESULT, USER, TranscriptEntry

ARGS_PREVIEW_CHARS = 300


def _args_preview(args: object) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= ARGS_PREVIEW_CHARS else text[:ARGS_PREVIEW_CHARS] + "…[truncated]"


def entry_line(entry: TranscriptEntry) -> str | None:
    if entry.kind == USER:
        return f"user: {entry.text}"
    if entry.kind == TOOL_CALL:
        return f"assistant_tool_call: {entry.tool} {_args_preview(entry.args or {})}"
    if entry.kind == TOOL_RESULT:
        return f"tool_result[{entry.tool} {entry.status}]: {entry.text}"
    if entry.kind == REPLY:
        return f"assistant: {entry.text}"
    return None  # turn markers are bookkeeping, not conversation


def lines_by_turn(entries: Sequence[TranscriptEntry]) -> list[tuple[int, list[str]]]:
    turns: dict[int, list[str]] = {}
    for entry in entries:
        line = entry_line(entry)
        if line is not None:
            turns.setdefault(entry.turn_index, []).append(line)
    return [(index, turns[index]) for index in sorted(turns)]
