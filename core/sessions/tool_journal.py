"""One batch's durable record: every call committed before any runs, results in call order.

Committing the calls first means a crash mid-batch leaves a durable list of what is still
owed a result (see settle_interrupted_calls). Results may finish in any order, but each
is committed only once every earlier call's result has been: the transcript never shows
call 2 answered while call 1 is not, so "the first unanswered call" is a prefix boundary.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from atomic_agent.sessions.session_database import SessionRepository
from atomic_agent.sessions.session_state import SessionState
from atomic_agent.sessions.transcript_entry import TOOL_CALL, TOOL_RESULT, TranscriptEntry


class ToolJournal:
    def __init__(self, store: SessionRepository, session: SessionState, turn_index: int, step: int) -> None:
        self._store = store
        self._session = session
        self._turn_index = turn_index
        self._step = step
        self._order: list[int] = []  # batch indexes in call order
        self._committed = 0  # how many of `_order` have their result committed
        self._ready: dict[int, TranscriptEntry] = {}
        self._tools: dict[int, str] = {}

    def commit_calls(self, calls: Sequence[tuple[int, str, Mapping[str, Any]]], reasoning: str | None) -> None:
        """Durably append one `assistant_tool_call` row per (batch_index, tool, args); the
        inference's reasoning rides on the first. Must return before any call runs."""
        rows = []
        for index, tool, args in calls:
            rows.append(TranscriptEntry(TOOL_CALL, self._turn_index, tool=tool, args=dict(args), reasoning=reasoning,
                                        step=self._step, batch_index=index))
            reasoning = None
            self._order.append(index)
            self._tools[index] = tool
        if rows:
            self._store.append(self._session, rows)

    def commit_result(self, index: int, tool: str, status: str, summary: str, details: Mapping[str, Any]) -> None:
        """Hold the result until every earlier call is answered, then commit all that are ready."""
        self._ready[index] = TranscriptEntry(TOOL_RESULT, self._turn_index, text=summary, tool=tool, status=status,
                                             details=dict(details), step=self._step, batch_index=index)
        ready: list[TranscriptEntry] = []
        position = self._committed
        while position < len(self._order) and self._order[position] in self._ready:
            ready.append(self._ready.pop(self._order[position]))
            position += 1
        if ready:
            self._append_unanswered(ready)  # one transaction for the results this one unblocked
            self._committed += len(ready)

    def _append_unanswered(self, rows: list[TranscriptEntry]) -> None:
        """Append the rows whose call has no result yet, checked inside the write lock: if a
        repair answered a call first, its answer stands, so each call is answered once."""
        # not fsynced: like the reply row, a result is made durable by the next durable commit (the
        # next batch's calls, or the finalize); a power cut before it leaves the call unanswered,
        # which restart settles exactly as for a process that died before writing the result
        with self._store.write(durable=False) as handle:
            answered = self._store.answered_batch_indexes(handle, self._session.id, self._turn_index, self._step)
            fresh = [r for r in rows if r.batch_index not in answered]
            if fresh:
                self._store.append(self._session, fresh)

    @property
    def complete(self) -> bool:
        return self._committed == len(self._order)

    def abandon(self, status: str, summary: str) -> None:
        """The batch will not finish (the step failed or was cancelled): commit, in call order,
        every result already in hand and `summary` for each call still running. Best effort:
        when even this write fails, the turn's failure handling and load repair answer them."""
        rows: list[TranscriptEntry] = []
        for position in range(self._committed, len(self._order)):
            index = self._order[position]
            held = self._ready.pop(index, None)
            rows.append(held or TranscriptEntry(TOOL_RESULT, self._turn_index, text=summary, tool=self._tools[index],
                                                status=status, details={"abandoned": True}, step=self._step,
                                                batch_index=index))
        if rows:
            try:
                self._append_unanswered(rows)
            except Exception:
                return
            self._committed = len(self._order)
