"""ToolLoopTracker: per-turn detection of repeated, unproductive and wandering tool calls.

The batch gate drives it in two phases. Before anything is dispatched, for each
non-terminal call in batch order: `verdict = check(tool, args)`, then
`record_call(tool, args)`; a critical verdict (or `breaker_tripped()`) replaces the
call with `veto_result(tool)`, recorded through `record_outcome(..., vetoed=True)`.
After the survivors ran, each real result goes to `record_outcome`. Because the gate
commits calls synchronously, a duplicate later in the same parallel batch already sees
its earlier sibling. Terminal verbs (reply, finish) are never gated.

Three signals:
- generic_repeat: args-only repeat count >= warning threshold -> warn + advisory notice.
- no_progress: args+result streak >= critical threshold -> critical (veto). Vetoed
  results are skipped by the streak so the veto cannot feed itself; consecutive vetoes
  are counted separately and trip the breaker at `breaker_veto_streak`.
- wandering: on wandering-prone tools, the distinct-args spread warns with a redirect at
  the wandering threshold and trips the breaker at the escalation threshold.

A tripped breaker ends the turn with `forced_loop_reply()`, a normal reply: loops are
never turn failures.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from atomic_agent.agent.hash_tool_outcome import canonical_json, hash_args, hash_tool_outcome
from atomic_agent.agent.loop_notices import (
    forced_loop_reply as format_forced_loop_reply,
    format_batch_repeat_notice,
    format_repeat_notice,
    format_veto_instruction,
    format_wandering_redirect,
)
from atomic_agent.agent.loop_settings import LoopSettings
from atomic_agent.agent.loop_verdict import BATCH_LOOP_LABEL, NO_LOOP, LoopVerdict
from atomic_agent.agent.loop_veto import is_loop_veto, veto_result
from atomic_agent.agent.loop_warning_buckets import WarningBuckets
from atomic_agent.records.tool_spec import ToolResult

__all__ = [
    "BATCH_LOOP_LABEL", "LoopVerdict", "TERMINAL_TOOLS", "ToolLoopTracker", "WANDERING_PRONE_TOOLS",
    "is_loop_veto", "is_wandering_prone_tool", "veto_result",
]

TERMINAL_TOOLS: frozenset[str] = frozenset({"reply", "finish"})
# tools where a model tends to guess target after target; os.fs.read is deliberately
# absent: reading many distinct files is ordinary work, not wandering
WANDERING_PRONE_TOOLS: frozenset[str] = frozenset({"os.web.fetch", "os.http.request"})
WANDERING_PRONE_PREFIX = "browser."

Args = Mapping[str, Any] | None


def is_wandering_prone_tool(tool: str) -> bool:
    """True for tools whose distinct-args spread is watched (web fetch, HTTP, browser)."""
    return tool in WANDERING_PRONE_TOOLS or tool.startswith(WANDERING_PRONE_PREFIX)


@attrs.define
class _CallEntry:
    tool: str
    args_hash: str
    result_hash: str | None = None  # None while the call is in flight
    vetoed: bool = False

    @property
    def counts_as_outcome(self) -> bool:
        return self.result_hash is not None and not self.vetoed


class ToolLoopTracker:
    """Loop detection state for one turn. Create a fresh tracker per turn."""

    def __init__(self, settings: LoopSettings | None = None) -> None:
        self.settings = (settings or LoopSettings()).clamped()
        self._history: deque[_CallEntry] = deque(maxlen=self.settings.history_size)
        self._veto_streak = 0
        self._escalated: set[str] = set()
        self._buckets = WarningBuckets()
        self._notices: list[str] = []
        self._last_batch: str | None = None
        self._batch_repeats = 0

    # -- counters ---------------------------------------------------------------------

    def repeat_count(self, tool: str, args: Args) -> int:
        """Recorded calls of `tool` with these exact args in the window (any outcome)."""
        digest = hash_args(args)
        return sum(1 for e in self._history if e.tool == tool and e.args_hash == digest)

    def no_progress_streak(self, tool: str, args: Args) -> int:
        """How many of this call's latest real outcomes are identical, newest first.

        Other calls interleaved in between are ignored; in-flight and vetoed entries are
        skipped; the first different outcome ends the streak.
        """
        digest = hash_args(args)
        target: str | None = None
        streak = 0
        for entry in reversed(self._history):
            if entry.tool != tool or entry.args_hash != digest or not entry.counts_as_outcome:
                continue
            if target is None:
                target = entry.result_hash
            elif entry.result_hash != target:
                break
            streak += 1
        return streak

    def distinct_spread(self, tool: str, args: Args = None) -> int:
        """Distinct completed args of `tool` in the window, +1 if `args` would be new."""
        seen = {e.args_hash for e in self._history if e.tool == tool and e.counts_as_outcome}
        spread = len(seen)
        if args is not None and hash_args(args) not in seen:
            spread += 1
        return spread

    @property
    def veto_streak(self) -> int:
        """Consecutive vetoed outcomes since the last real one."""
        return self._veto_streak

    # -- the gate ---------------------------------------------------------------------

    def check(self, tool: str, args: Args) -> LoopVerdict:
        """Read-only verdict on calling `tool(args)` next. Terminal verbs always pass."""
        if tool in TERMINAL_TOOLS:
            return NO_LOOP
        s = self.settings
        streak = self.no_progress_streak(tool, args)
        if streak >= s.critical_threshold:
            return LoopVerdict("critical", "no_progress", format_veto_instruction(tool), tool, streak)
        wandering = is_wandering_prone_tool(tool)
        spread = self.distinct_spread(tool, args) if wandering else 0
        if wandering and spread >= s.wandering_escalation:
            return LoopVerdict("critical", "wandering", format_wandering_redirect(tool, spread), tool,
                               spread, breaker=True)
        repeats = self.repeat_count(tool, args)
        if repeats >= s.warning_threshold:
            return LoopVerdict("warn", "generic_repeat", format_repeat_notice(tool, repeats), tool, repeats)
        if wandering and spread >= s.wandering_threshold:
            return LoopVerdict("warn", "wandering", format_wandering_redirect(tool, spread), tool, spread)
        return NO_LOOP

    def record_call(self, tool: str, args: Args) -> LoopVerdict:
        """Commit a call about to be dispatched (or vetoed); returns the verdict it had.

        Queues the warning notice (bucketed) and latches a wandering escalation, which is
        why the gate must call this right after `check`, before dispatching anything.
        """
        if tool in TERMINAL_TOOLS:
            return NO_LOOP
        verdict = self.check(tool, args)
        if verdict.breaker:
            self._escalated.add(tool)
        if verdict.level == "warn" and verdict.notice:
            key = (verdict.detector, tool, hash_args(args) if verdict.detector == "generic_repeat" else "")
            threshold = (self.settings.warning_threshold if verdict.detector == "generic_repeat"
                         else self.settings.wandering_threshold)
            if self._buckets.should_emit(key, verdict.count, threshold):
                self._notices.append(verdict.notice)
        self._history.append(_CallEntry(tool, hash_args(args)))
        return verdict

    def record_outcome(self, tool: str, args: Args, result: ToolResult, vetoed: bool = False) -> None:
        """Commit the result of a recorded call. A loop-veto result counts as vetoed."""
        if tool in TERMINAL_TOOLS:
            return
        vetoed = vetoed or is_loop_veto(result)
        digest = hash_args(args)
        # oldest in-flight match first: duplicates in one batch resolve in dispatch order
        entry = next((e for e in self._history
                      if e.tool == tool and e.args_hash == digest and e.result_hash is None), None)
        if entry is None:  # never recorded, or already rotated out of the window
            entry = _CallEntry(tool, digest)
            self._history.append(entry)
        entry.result_hash = hash_tool_outcome(tool, result)
        entry.vetoed = vetoed
        self._veto_streak = self._veto_streak + 1 if vetoed else 0

    # -- composite batches ------------------------------------------------------------

    def observe_batch(self, calls: Sequence[tuple[str, Args]]) -> LoopVerdict:
        """Commit one step's calls as a batch; warns when a multi-call batch repeats the
        previous step's batch exactly, in the same order.

        Call once per step with all of the step's calls; a solo step breaks the run. A
        reordered batch is a different batch: a model may legitimately reorder a set of
        calls after rethinking.
        """
        tools = [(tool, hash_args(args)) for tool, args in calls if tool not in TERMINAL_TOOLS]
        if len(tools) < 2:
            self._last_batch, self._batch_repeats = None, 0
            return NO_LOOP
        signature = canonical_json(tools)
        if signature == self._last_batch:
            self._batch_repeats += 1
        else:
            self._last_batch, self._batch_repeats = signature, 1
        times = self._batch_repeats
        if times < 2:
            return NO_LOOP
        notice = format_batch_repeat_notice(len(tools), times)
        if self._buckets.should_emit((BATCH_LOOP_LABEL, signature), times, 2):
            self._notices.append(notice)
        return LoopVerdict("warn", "generic_repeat", notice, BATCH_LOOP_LABEL, times)

    # -- outcomes for the agent loop ---------------------------------------------------

    def is_wandering_escalated(self, tool: str | None = None) -> bool:
        """True once a wandering loop on `tool` (any tool when None) crossed escalation."""
        return bool(self._escalated) if tool is None else tool in self._escalated

    def breaker_tripped(self) -> bool:
        """True when the turn must end now with `forced_loop_reply()`."""
        return self._veto_streak >= self.settings.breaker_veto_streak or bool(self._escalated)

    def breaker_detector(self) -> str | None:
        """Why the breaker tripped: "no_progress" (veto streak), "wandering", or None."""
        if self._veto_streak >= self.settings.breaker_veto_streak:
            return "no_progress"
        return "wandering" if self._escalated else None

    def forced_loop_reply(self) -> str:
        """The graceful reply text that ends a turn whose breaker tripped."""
        return format_forced_loop_reply(self.breaker_detector())

    def take_notices(self) -> list[str]:
        """Pending notices for the next prompt's `### notice` section, deduplicated, in
        the order they arose; the queue is emptied."""
        notices = list(dict.fromkeys(self._notices))
        self._notices.clear()
        return notices
