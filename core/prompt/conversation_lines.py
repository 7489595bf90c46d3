"""Render transcript rows as the prompt's `### conversation` lines, grouped by turn.

A batch's calls are committed before they run and their results after, so the rows of
one step read call, call, result, result. The prompt shows each call followed by its
own result (matched on turn, step and batch index), which is what the model produced
and what it needs to read. The batch-wide result cap is applied here, oldest result
first, so one huge result cannot crowd out its siblings.

With `fold`, only the latest batch's results are shown in full; every older result
becomes the one line `fold` makes of it (the prompt builder renders
`older_tool_result.j2`), so the tail stays small however many steps a turn takes. A
folded line depends on its row alone, so it is the same bytes on every later step.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from atomic_agent.prompt.trim_batch_summaries import trim_batch_summaries
from atomic_agent.sessions.transcript_entry import FAILURE_NOTE, REPLY, TOOL_CALL, TOOL_RESULT, USER, TranscriptEntry

ARGS_PREVIEW_CHARS = 300
USER_PREFIX = "user: "  # what starts a user message's line
NO_CAP = 1 << 62


def _args_preview(args: object) -> str:
    text = json.dumps(args, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text if len(text) <= ARGS_PREVIEW_CHARS else text[:ARGS_PREVIEW_CHARS] + "…[truncated]"


def entry_line(entry: TranscriptEntry, text: str | None = None) -> str | None:
    """One row as a prompt line; `text` overrides a result's (trimmed) summary."""
    if entry.kind == USER:
        return USER_PREFIX + entry.text
    if entry.kind == TOOL_CALL:
        return f"assistant_tool_call: {entry.tool} {_args_preview(entry.args or {})}"
    if entry.kind == TOOL_RESULT:
        return f"tool_result[{entry.tool} {entry.status}]: {entry.text if text is None else text}"
    if entry.kind == REPLY:
        return f"assistant: {entry.text}"
    if entry.kind == FAILURE_NOTE:
        return f"system: {entry.text}"
    return None  # turn markers and compaction rows are bookkeeping, not conversation lines


def _key(entry: TranscriptEntry) -> tuple[int, int | None, int | None]:
    return (entry.turn_index, entry.step, entry.batch_index)


def _paired(entries: Sequence[TranscriptEntry]) -> list[TranscriptEntry]:
    """The rows with each result moved right behind its call (unmatched rows stay put)."""
    results: dict[tuple[int, int | None, int | None], list[TranscriptEntry]] = {}
    calls = {_key(e) for e in entries if e.kind == TOOL_CALL}
    for entry in entries:
        if entry.kind == TOOL_RESULT and _key(entry) in calls:
            results.setdefault(_key(entry), []).append(entry)
    out: list[TranscriptEntry] = []
    for entry in entries:
        if entry.kind == TOOL_RESULT and _key(entry) in calls:
            continue  # emitted beside its call
        out.append(entry)
        if entry.kind == TOOL_CALL and results.get(_key(entry)):
            out.append(results[_key(entry)].pop(0))
    return out


def _trimmed_texts(entries: Sequence[TranscriptEntry], cap: int) -> dict[int, str]:
    """id(result row) -> summary after the per-batch cap (only results that changed); keyed
    by identity because rows built in memory have no seq yet."""
    batches: dict[tuple[int, int | None], list[TranscriptEntry]] = {}
    for entry in entries:
        if entry.kind == TOOL_RESULT:
            batches.setdefault((entry.turn_index, entry.step), []).append(entry)
    out: dict[int, str] = {}
    for rows in batches.values():
        rows.sort(key=lambda e: e.batch_index or 0)
        for row, text in zip(rows, trim_batch_summaries([r.text for r in rows], cap), strict=True):
            if text != row.text:
                out[id(row)] = text
    return out


Fold = Callable[[TranscriptEntry], str]


def latest_batch(entries: Sequence[TranscriptEntry]) -> tuple[int, int | None] | None:
    """(turn, step) of the newest tool result: the batch the model is about to act on."""
    return next(((e.turn_index, e.step) for e in reversed(entries) if e.kind == TOOL_RESULT), None)


Batch = tuple[int, "int | None"]
LATEST_HERE = (-1, -1)  # `newest` default: the newest batch among `entries` themselves


def lines_by_turn(entries: Sequence[TranscriptEntry], batch_char_cap: int = NO_CAP,
                  fold: Fold | None = None, newest: Batch | None = LATEST_HERE) -> list[tuple[int, list[str]]]:
    """(turn index, its lines) per turn with a line. With `fold`, results outside the batch
    `newest` are folded — by default the newest batch of `entries`; a caller rendering part
    of a transcript passes the whole transcript's (None: every result is folded)."""
    trimmed = _trimmed_texts(entries, batch_char_cap)
    if fold is None:
        newest = None
    elif newest == LATEST_HERE:
        newest = latest_batch(entries)
    turns: dict[int, list[str]] = {}
    for entry in _paired(entries):
        text = trimmed.get(id(entry))
        if fold is not None and entry.kind == TOOL_RESULT and (entry.turn_index, entry.step) != newest:
            text = fold(entry)
        line = entry_line(entry, text)
        if line is not None:
            turns.setdefault(entry.turn_index, []).append(line)
    return [(index, turns[index]) for index in sorted(turns)]
