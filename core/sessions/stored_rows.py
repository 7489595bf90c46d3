"""How sessions and transcript rows are stored, the same in every backend: the columns, the
JSON kept in text columns, the mapping between a row and its record, and the seq an append
gives its rows. Each backend keeps only its dialect (placeholders, locking) around these.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TranscriptEntry
from atomic_agent.storage.store_clock import now_iso

ENTRY_COLUMNS = ("session_id", "seq", "turn_index", "kind", "text", "tool", "args", "status", "reason",
                 "reasoning", "details", "step", "batch_index", "created_at")


def _dumps(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, default=str)


def _loads(value: str | None) -> Any:
    return None if value is None else json.loads(value)


def session_state_of(data: Mapping[str, Any]) -> SessionState:
    """A `sessions` row (column -> value) as the session it describes, without its transcript."""
    return SessionState(id=data["id"], working_dir=Path(data["working_dir"]), created_at=data["created_at"],
                        status=data["status"], title=data["title"] or "", loaded_tools=_loads(data["loaded_tools"]) or [],
                        known_facts=_loads(data["known_facts"]) or [], updated_at=data["updated_at"] or "")


def session_fields_of(state: SessionState) -> list[Any]:
    """What `save_state` writes, in order: status, title, loaded tools, known facts (JSON), the id last."""
    return [state.status, state.title, _dumps(state.loaded_tools), _dumps(state.known_facts), state.id]


def entry_of(row: Mapping[str, Any]) -> TranscriptEntry:
    """A `transcript` row (column -> value) as its entry."""
    return TranscriptEntry(kind=row["kind"], turn_index=row["turn_index"], text=row["text"] or "", tool=row["tool"],
                           args=_loads(row["args"]), status=row["status"], reason=row["reason"],
                           reasoning=row["reasoning"], details=_loads(row["details"]), step=row["step"],
                           batch_index=row["batch_index"], created_at=row["created_at"], seq=row["seq"])


def entry_values(session_id: str, entry: TranscriptEntry, seq: int, created_at: str) -> tuple[Any, ...]:
    """The values of ENTRY_COLUMNS, in order, that store `entry` at `seq`."""
    return (session_id, seq, entry.turn_index, entry.kind, entry.text, entry.tool, _dumps(entry.args), entry.status,
            entry.reason, entry.reasoning, _dumps(entry.details), entry.step, entry.batch_index, created_at)


def stamp_appended(state: SessionState, entries: Iterable[TranscriptEntry], stored: int | None) -> list[TranscriptEntry]:
    """`entries` with the seqs that follow both the highest `stored` one and the rows `state`
    holds, timestamped now unless they already are.

    `stored` is read from the database inside the append's transaction, not taken from memory:
    another writer (recovery, a steer consumer) may have appended since `state` was loaded."""
    # rows held in memory are in seq order (rows built in memory have seq -1): the last decides
    held = next((e.seq for e in reversed(state.entries) if e.seq >= 0), -1)
    next_seq = 1 + max(-1 if stored is None else int(stored), held)
    return [attrs.evolve(e, seq=next_seq + i, created_at=e.created_at or now_iso()) for i, e in enumerate(entries)]
