"""Ask the text provider for a summary that can stand in for a conversation's rows.

The request is an ordinary completion (no grammar, no tools), like memory reflection's:
`templates/compaction.j2` is the instruction prefix and `compaction_transcript.j2` the
rows, rendered with the same lines the agent's prompt uses (calls paired with results)
and packed to the context window, oldest turns dropped first. A user override in
`<state>/templates/` wins, as for every prompt template.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from atomic_agent.llm.provider_protocol import CompletionRequest
from atomic_agent.llm.model_profile import ModelProfile
from atomic_agent.prompt.build_prompt import earlier_summary
from atomic_agent.prompt.conversation_lines import lines_by_turn
from atomic_agent.prompt.estimate_tokens import estimate_tokens
from atomic_agent.prompt.pack_conversation import pack_conversation
from atomic_agent.sessions.compact_session import CompactionError
from atomic_agent.sessions.transcript_entry import TranscriptEntry

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
