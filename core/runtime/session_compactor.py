"""`Runtime.compact`: one shared compaction per session, run between turns.

A compaction goes through the TurnController like a turn does, so it waits for the
session's running turn (and any turns queued before it) to end, and no turn starts on
the session while it runs. Callers who ask while one is pending or running get that same
compaction: one provider request, one result, one error. A caller that stops waiting
does not cancel it for the others; closing the runtime rejects every pending one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.llm.provider_protocol import CompletionRequest
from atomic_agent.prompt.build_prompt import earlier_summary, estimate_tokens
from atomic_agent.prompt.conversation_lines import lines_by_turn
from atomic_agent.prompt.pack_conversation import pack_conversation
from atomic_agent.sessions.compact_session import CompactionError, CompactionResult, compact_session
from atomic_agent.sessions.transcript_entry import TranscriptEntry

# Ask the text provider for a summary that can stand in for a conversation's rows.
#
# The request is an ordinary completion (no grammar, no tools), like memory reflection's:
# `templates/compaction.j2` is the instruction prefix and `compaction_transcript.j2` the
# rows, rendered with the same lines the agent's prompt uses (calls paired with results)
# and packed to the context window, oldest turns dropped first. A user override in
# `<state>/templates/` wins, as for every prompt template.

SUMMARY_TOKENS = 1024
MAX_WORDS = 400
INSTRUCTION_ROOM = 512  # tokens kept free for the instructions and framing
DEFAULT_CONTEXT = 8192


def summary_text(content: str, profile: ModelProfile | None) -> str:
    """The summary without a reasoning block the model may have written first."""
    if profile is not None and profile.reasoning_close and profile.reasoning_close in content:
        content = content.rsplit(profile.reasoning_close, 1)[1]
    return content.strip()


async def summarise_conversation(provider: Any, env: Any, profile: ModelProfile | None,
                                 entries: Sequence[TranscriptEntry], *, n_ctx: int | None,
                                 batch_char_cap: int) -> str:
    room = (n_ctx or DEFAULT_CONTEXT) - SUMMARY_TOKENS - INSTRUCTION_ROOM
    lines, _ = pack_conversation(lines_by_turn(entries, batch_char_cap), max(room, 256), estimate_tokens)
    stable = env.get_template("compaction.j2").render(max_words=MAX_WORDS)
    tail = env.get_template("compaction_transcript.j2").render(previous_summary=earlier_summary(entries),
                                                               conversation=lines)
    if profile is None:
        prompt, prefix_length = stable + tail, len(stable)
    else:
        prompt, prefix_length = profile.frame_prompt(stable, tail), len(profile.frame_stable_prefix(stable))
    # any slot: the session's own slot keeps its cached prompt for the next turn
    request = CompletionRequest(prompt=prompt, grammar=None, n_predict=SUMMARY_TOKENS, slot_id=-1,
                                cache_prompt=False, temperature=0.1, stream=False, prefix_length=prefix_length)
    completion = await provider.complete(request)
    if completion.truncated or completion.stop_type == "limit":
        raise CompactionError(f"the summary was cut off at {SUMMARY_TOKENS} tokens; the history is unchanged")
    return summary_text(completion.content, profile)


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
