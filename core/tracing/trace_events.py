"""The vocabulary of trace events: type names, their fields, and field builders.

Every line also carries `seq`, `ts` and `sessionId` (added by TraceRecorder). Field names
are camelCase on disk. The fields of each event:

- session_started   {workingDir, traceFormat, metadata?} — traceFormat is TRACE_FORMAT when
                     written (absent: format 1, from before replay fields existed)
- turn_started      {turnIndex, userText}
- turn_finished     {turnIndex, reason, stepCount, durationMs}
- step_started      {turnIndex, step}
- step_finished     {turnIndex, step, durationMs}
- prompt_captured   {stablePrefixHash, tail, tokens: {total, stablePrefix, tail, estimated},
                     slotId, cacheReused, profile, framing, promptStyle, prefixSections,
                     grammarHash, promptDate, nCtx, nPredict} — the stable prefix itself is
                     never stored, only its salted hash and one salted hash per `### ` section
                     (`prefixSections`: [[header, hash], ...], so a replay can name the section
                     that changed); the tail is verbatim. grammarHash is the sha256 of the
                     step's grammar (null for native tool calls); promptDate the date the tail
                     shows; nCtx/nPredict the context window and answer budget the packing used
- llm_completion    {content, reasoningContent, attempt (1, or 2 for the parse retry),
                     durationMs, stopType, stop, truncated, tokensPredicted, cacheN, promptN,
                     toolCalls?} — toolCalls ([[name, args], ...]) only for a native answer
- tool_invocation   {tool, args, status, summary, details?, batchIndex?, batchSize?} — one
                     event per call of the step's batch; batchIndex/batchSize only when the
                     batch has more than one call (build with `tool_invocation_fields`)
- parse_retry       {turnIndex?, step?, reason?} — the model output did not parse; one retry
- loop_detected     {level, detector, tool}
- error             {category, message}
- trace_truncated   {maxBytes, droppedType} — written once when the per-session cap is hit;
                     every later event is dropped
"""

from __future__ import annotations

import hashlib
from typing import Any

from atomic_agent.tracing.prefix_hash import hash_prefix

SESSION_STARTED = "session_started"
TURN_STARTED = "turn_started"
TURN_FINISHED = "turn_finished"
STEP_STARTED = "step_started"
STEP_FINISHED = "step_finished"
PROMPT_CAPTURED = "prompt_captured"
LLM_COMPLETION = "llm_completion"
TOOL_INVOCATION = "tool_invocation"
PARSE_RETRY = "parse_retry"
LOOP_DETECTED = "loop_detected"
ERROR = "error"
TRACE_TRUNCATED = "trace_truncated"

EVENT_TYPES: frozenset[str] = frozenset({
    SESSION_STARTED, TURN_STARTED, TURN_FINISHED, STEP_STARTED, STEP_FINISHED, PROMPT_CAPTURED,
    LLM_COMPLETION, TOOL_INVOCATION, PARSE_RETRY, LOOP_DETECTED, ERROR, TRACE_TRUNCATED,
})

# The trace format written today. 2 added what a rerun needs (prefixSections, grammarHash,
# promptDate, nCtx, nPredict, and traceFormat itself); a reader refuses a newer one.
TRACE_FORMAT = 2
TRACE_FORMAT_KEY = "traceFormat"
SECTION_MARK = "### "
PREAMBLE_SECTION = "(before the first ### header)"

# keys the recorder owns on every line; a caller's field may not shadow them
ENVELOPE_KEYS: frozenset[str] = frozenset({"seq", "ts", "type", "sessionId"})

# a prompt_captured field that must never reach disk (the recorder refuses it)
FORBIDDEN_PROMPT_FIELD = "stablePrefix"


def tool_invocation_fields(batch_index: int, batch_size: int) -> dict[str, int]:
    """`{batchIndex, batchSize}` for a call of a multi-call batch; `{}` for a solo step.

    Solo steps omit the pair so traces written before parallel batches read the same.
    """
    if batch_size < 1 or not 0 <= batch_index < batch_size:
        raise ValueError(f"batch_index {batch_index} / batch_size {batch_size}: need "
                         "batch_size >= 1 and 0 <= batch_index < batch_size")
    if batch_size == 1:
        return {}
    return {"batchIndex": batch_index, "batchSize": batch_size}


def prompt_captured_fields(*, stable_prefix: str, tail: str, salt: str, total_tokens: int,
                           stable_prefix_tokens: int, tail_tokens: int, estimated: bool,
                           slot_id: int | None, cache_reused: bool) -> dict[str, Any]:
    """The fields of a prompt_captured event: the prefix goes in, only its salted hash comes out."""
    return {
        "stablePrefixHash": hash_prefix(stable_prefix, salt),
        "tail": tail,
        "tokens": {"total": total_tokens, "stablePrefix": stable_prefix_tokens, "tail": tail_tokens,
                   "estimated": estimated},
        "slotId": slot_id,
        "cacheReused": cache_reused,
    }


def prompt_sections(text: str) -> list[tuple[str, str]]:
    """(header, text) of each `### ` section of a rendered prompt part, in order; text before the
    first header (framing, a persona line) is one section named PREAMBLE_SECTION when not empty."""
    sections: list[tuple[str, str]] = []
    name = PREAMBLE_SECTION
    lines: list[str] = []
    for line in text.splitlines(keepends=True):
        if line.startswith(SECTION_MARK):
            if lines or name != PREAMBLE_SECTION:
                sections.append((name, "".join(lines)))
            name, lines = line.rstrip("\r\n"), [line]
        else:
            lines.append(line)
    if lines or name != PREAMBLE_SECTION:
        sections.append((name, "".join(lines)))
    return sections


def prefix_section_hashes(framed_prefix: str, salt: str) -> list[list[str]]:
    """`[[header, salted hash], ...]` of the framed stable prefix: names without the text."""
    return [[name, hash_prefix(text, salt)] for name, text in prompt_sections(framed_prefix)]


def grammar_hash(grammar: str | None) -> str | None:
    """sha256 hex of the step's grammar (it holds only tool names and shapes: no salt needed)."""
    return None if grammar is None else hashlib.sha256(grammar.encode("utf-8")).hexdigest()
