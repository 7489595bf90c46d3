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

import hashlib
import json
import logging
import os
from collections import deque
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, Literal

import attrs

from atomic_agent.hook_records import ToolResult

# The loop detector's thresholds, read from `ATOMIC_AGENT_LOOP_*` environment variables.
#
# These knobs are env-only on purpose: they tune a safety net, not user-facing behaviour,
# so they never appear in config.json.

_log = logging.getLogger(__name__)


def _positive(_inst: object, attribute: attrs.Attribute[Any], value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"LoopSettings.{attribute.name} must be a whole number >= 1, got {value!r}")


@attrs.frozen(kw_only=True)
class LoopSettings:
    """Per-turn loop detection thresholds (see `ToolLoopTracker`).

    - `warning_threshold`: prior identical-args calls at which `check` warns.
    - `critical_threshold`: prior identical args+result outcomes at which `check` vetoes.
    - `breaker_veto_streak`: consecutive vetoes after which the turn ends gracefully.
    - `history_size`: ring-buffer length of the per-turn call history.
    - `wandering_threshold`: distinct-args spread on a wandering-prone tool that warns.
    - `wandering_escalation`: distinct-args spread that trips the breaker.
    """

    warning_threshold: int = attrs.field(default=3, validator=_positive)
    critical_threshold: int = attrs.field(default=5, validator=_positive)
    breaker_veto_streak: int = attrs.field(default=3, validator=_positive)
    history_size: int = attrs.field(default=40, validator=_positive)
    wandering_threshold: int = attrs.field(default=6, validator=_positive)
    wandering_escalation: int = attrs.field(default=12, validator=_positive)

    def clamped(self) -> LoopSettings:
        """A copy with the ordering invariants enforced.

        critical >= warning (a veto never precedes its warning), escalation >= wandering
        threshold, and history >= escalation so the spread window is never trimmed
        before it can escalate.
        """
        critical = max(self.critical_threshold, self.warning_threshold)
        escalation = max(self.wandering_escalation, self.wandering_threshold)
        history = max(self.history_size, escalation)
        return attrs.evolve(self, critical_threshold=critical, wandering_escalation=escalation,
                            history_size=history)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LoopSettings:
        """Defaults overridden by any set `ATOMIC_AGENT_LOOP_*` variable, then clamped.

        A value that is not a whole number >= 1 is logged and ignored (the default
        stays): a typo in a tuning knob must never stop a turn from running.
        """
        env = os.environ if environ is None else environ
        defaults = cls()
        values: dict[str, int] = {}
        for name, env_name in LOOP_ENV_VARS.items():
            raw = env.get(env_name, "").strip()
            if not raw:
                continue
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if value < 1:
                _log.warning("%s=%r is not a whole number >= 1; using the default %d. Unset it or "
                             "give a positive integer.", env_name, raw, getattr(defaults, name))
                continue
            values[name] = value
        return cls(**values).clamped()


LOOP_ENV_VARS: Mapping[str, str] = {
    "warning_threshold": "ATOMIC_AGENT_LOOP_WARNING_THRESHOLD",
    "critical_threshold": "ATOMIC_AGENT_LOOP_CRITICAL_THRESHOLD",
    "breaker_veto_streak": "ATOMIC_AGENT_LOOP_BREAKER_VETO_STREAK",
    "history_size": "ATOMIC_AGENT_LOOP_HISTORY_SIZE",
    "wandering_threshold": "ATOMIC_AGENT_LOOP_WANDERING_THRESHOLD",
    "wandering_escalation": "ATOMIC_AGENT_LOOP_WANDERING_ESCALATION",
}


# What the loop detector says about one prospective call or one batch.

LoopLevel = Literal["none", "warn", "critical"]
LoopDetectorName = Literal["generic_repeat", "no_progress", "wandering"]

BATCH_LOOP_LABEL = "<batch>"  # the `tool` of verdicts about a whole batch


@attrs.frozen
class LoopVerdict:
    """`level` "warn" is advisory (the call runs, `notice` goes to the next prompt);
    "critical" means the gate must veto the call. `breaker` is set when committing the
    call trips the loop breaker (wandering escalation): the turn then ends with a forced
    graceful reply. `count` is the number that crossed the threshold (repeats, streak or
    spread)."""

    level: LoopLevel = "none"
    detector: LoopDetectorName | None = None
    notice: str | None = None
    tool: str = ""
    count: int = 0
    breaker: bool = False

    @property
    def vetoes(self) -> bool:
        return self.level == "critical"

    @property
    def trace_level(self) -> str:
        """The `level` of a `loop_detected` trace event: warn | critical | breaker."""
        return "breaker" if self.breaker else self.level


NO_LOOP = LoopVerdict()


# Stable fingerprints of tool arguments and tool outcomes, for loop detection.
#
# Two calls are "the same" when their args serialise to the same canonical JSON; two
# outcomes are "the same" when status, summary and details match once per-call noise
# (timings, sizes, ids) is removed. Without stripping that noise, every HTTP result
# would hash differently and a dead endpoint hit in a loop would never register.

VOLATILE_RESULT_KEYS: frozenset[str] = frozenset({
    "timestamp", "ts", "date", "time", "timeTotal", "timeTotalSeconds", "durationMs",
    "sizeDownload", "requestId", "request_id", "id", "traceId", "trace_id", "sentAt",
    "createdAt", "deliveredAt",
})

SHELL_TOOL_PREFIX = "os.shell."
_SHELL_OUTPUT_KEYS = ("stdout", "stderr", "output")


def _normalise(value: Any) -> Any:
    """JSON-ready copy: mappings get str keys, sequences become lists, sets get sorted,
    anything else unknown becomes its repr (hashing must never raise)."""
    if isinstance(value, Mapping):
        return {str(key): _normalise(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normalise(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_normalise(item) for item in value), key=canonical_json)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def canonical_json(value: Any) -> str:
    """Key-sorted, whitespace-free JSON of `value`, so key order never changes a hash."""
    return json.dumps(_normalise(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def strip_volatile(value: Any) -> Any:
    """`value` with every `VOLATILE_RESULT_KEYS` key dropped at any depth."""
    if isinstance(value, Mapping):
        return {key: strip_volatile(item) for key, item in value.items()
                if str(key) not in VOLATILE_RESULT_KEYS}
    if isinstance(value, (list, tuple)):
        return [strip_volatile(item) for item in value]
    return value


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:20]


def hash_args(args: Mapping[str, Any] | None) -> str:
    """Fingerprint of a call's arguments (None and {} are the same call)."""
    return _digest(canonical_json(args or {}))


def _shell_outcome(result: ToolResult) -> dict[str, Any]:
    # a shell run is judged by what it did (exit code + output), not by its timings
    details = result.details
    exit_code = details.get("exitCode", details.get("exit_code"))
    output = {key: details[key] for key in _SHELL_OUTPUT_KEYS if key in details}
    if not output:
        output = {"summary": result.summary}
    return {"status": result.status, "exitCode": exit_code, "output": output}


def hash_tool_outcome(tool: str, result: ToolResult) -> str:
    """Fingerprint of one tool result; equal for results that show no progress."""
    if tool.startswith(SHELL_TOOL_PREFIX):
        material: dict[str, Any] = _shell_outcome(result)
    else:
        material = {"status": result.status, "summary": result.summary,
                    "details": strip_volatile(_normalise(result.details))}
    return _digest(canonical_json(material))


# The texts the loop detector shows the model (notices, veto) and the user (forced reply).

def format_repeat_notice(tool: str, count: int) -> str:
    """Advisory for the `### notice` section when one call keeps being repeated."""
    times = "once" if count == 1 else f"{count} times"
    return (f"{tool} has already been called {times} this turn with exactly these "
            "arguments. Another identical call will not tell you anything new: use the "
            "results you already have, change the arguments, pick a different tool, or reply.")


def format_veto_instruction(tool: str) -> str:
    """Summary of the synthetic result that replaces a vetoed call."""
    return (f"Not run: {tool} was called again with the same arguments after returning the "
            "same result several times in a row. Change approach: call a different tool, "
            "use different arguments, or reply with what you already know.")


def format_wandering_redirect(tool: str, spread: int) -> str:
    """Redirect for the `### notice` section when a tool probes target after target."""
    return (f"You have tried {spread} different targets with {tool} this turn without "
            "settling on an answer. Stop probing new URLs or pages: run a web search to find "
            "the right address, or reply now with a best-effort answer from what you found.")


def format_batch_repeat_notice(size: int, times: int) -> str:
    """Advisory when the same multi-call batch is emitted on consecutive steps."""
    return (f"The last {times} steps each issued the same batch of {size} tool calls in the "
            "same order. Repeating the batch will not change its results: build on them, "
            "change the calls, or reply.")


def format_forced_loop_reply(detector: str | None = None) -> str:
    """The reply that ends a turn gracefully when the loop breaker trips.

    Recorded as a normal assistant reply: the turn succeeded in stopping itself, so it
    is never reported as a failure.
    """
    if detector == "wandering":
        return ("I stopped here: I tried many different pages and addresses without finding "
                "what I was looking for, and more guessing would not help. If you can point "
                "me to the exact URL or source, or narrow the question, I'll pick it up from there.")
    return ("I stopped here: I was repeating the same tool calls and getting the same results, "
            "so more attempts would not make progress. Tell me how you'd like to proceed, or "
            "give me more detail (an exact path, URL or command) and I'll take a different approach.")


# The synthetic result that replaces a call the loop gate refused to run.

LOOP_DENIED_REASON = "tool-loop"


def veto_result(tool: str) -> ToolResult:
    """The error result the model sees instead of running `tool` (it never runs)."""
    return ToolResult("error", format_veto_instruction(tool), {"deniedReason": LOOP_DENIED_REASON})


def is_loop_veto(result: ToolResult) -> bool:
    """True for a result produced by `veto_result` (or anything shaped like it)."""
    return result.status == "error" and result.details.get("deniedReason") == LOOP_DENIED_REASON


# Rate-limits loop warnings so one ongoing issue does not add a notice every step.

# once a warning fired for an issue, it fires again only after this many more occurrences
LOOP_WARNING_BUCKET_SIZE = 5


class WarningBuckets:
    """Remembers, per issue key, the last bucket a warning was emitted for."""

    def __init__(self, bucket_size: int = LOOP_WARNING_BUCKET_SIZE) -> None:
        if bucket_size < 1:
            raise ValueError(f"bucket_size must be >= 1, got {bucket_size}")
        self._bucket_size = bucket_size
        self._emitted: dict[Hashable, int] = {}

    def should_emit(self, key: Hashable, count: int, threshold: int) -> bool:
        """True the first time `count` reaches `threshold` for `key`, then once per bucket."""
        if count < threshold:
            return False
        bucket = (count - threshold) // self._bucket_size
        last = self._emitted.get(key)
        if last is not None and bucket <= last:
            return False
        self._emitted[key] = bucket
        return True



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
