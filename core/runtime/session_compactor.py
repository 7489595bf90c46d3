"""`Runtime.compact`: one shared compaction per session, run between turns.

A compaction goes through the TurnController like a turn does, so it waits for the
session's running turn (and any turns queued before it) to end, and no turn starts on
the session while it runs. Callers who ask while one is pending or running get that same
compaction: one provider request, one result, one error. A caller that stops waiting
does not cancel it for the others; closing the runtime rejects every pending one.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from atomic_agent.runtime.summarise_conversation import summarise_conversation
from atomic_agent.sessions.compact_session import CompactionError, CompactionResult, compact_session

if TYPE_CHECKING:
    from atomic_agent.runtime.runtime import Runtime


class SessionCompactor:
    def __init__(self, runtime: Runtime) -> None:
        self._runtime = runtime
        self._pending: dict[str, asyncio.Future[CompactionResult]] = {}

    def is_pending(self, session_id: str) -> bool:
        return session_id in self._pending

    async def compact(self, session_id: str) -> CompactionResult:
        shared = self._pending.get(session_id)
        if shared is None:
            self._runtime.sessions.load(session_id)  # an unknown session fails here, before anything is queued
            shared = asyncio.ensure_future(self._when_idle(session_id))
            self._pending[session_id] = shared
            shared.add_done_callback(lambda done: self._forget(session_id, done))
        try:
            return await asyncio.shield(shared)
        except asyncio.CancelledError:
            if shared.cancelled():  # the runtime closed under it; this caller was not cancelled itself
                raise CompactionError(f"compaction of session {session_id} did not run: the runtime closed first; "
                                      "the history is unchanged") from None
            raise

    def cancel_all(self) -> None:
        """Closing: settle every compaction nobody will carry out, so no caller waits for ever.
        A cancel can only land at an await (the queue or the provider), before the commit."""
        for shared in list(self._pending.values()):
            shared.cancel()

    def _forget(self, session_id: str, done: asyncio.Future[CompactionResult]) -> None:
        if self._pending.get(session_id) is done:
            del self._pending[session_id]
        if not done.cancelled():
            done.exception()  # every waiter sees the error; this only marks it retrieved

    async def _when_idle(self, session_id: str) -> CompactionResult:
        return await self._runtime.turns.submit(session_id, lambda: self._now(session_id), origin="cli")

    async def _now(self, session_id: str) -> CompactionResult:
        runtime = self._runtime
        try:
            plan = await runtime.prompt_plan()
        except Exception as exc:
            raise CompactionError(f"compaction of session {session_id} failed: the provider is not available "
                                  f"({type(exc).__name__}: {exc}); the history is unchanged") from exc

        async def summarise(entries):  # type: ignore[no-untyped-def]
            return await summarise_conversation(runtime.provider, plan.env, plan.profile, entries, n_ctx=plan.n_ctx,
                                                batch_char_cap=runtime.config.agent.batch_tool_result_char_cap)

        result = await compact_session(runtime.sessions, session_id, summarise)
        if result.compacted:
            runtime.trace_for(session_id).record("session_compacted", boundarySeq=result.boundary_seq,
                                                 replacedRows=result.replaced_rows, keptRows=result.kept_rows)
        return result
