"""A trace read as a session that can be run again: its turns, each turn's steps, and per step
the captured prompt, the completions the model gave and the tool results the calls got.

Strict where `trace show` is lenient: a rerun of a damaged trace would report drift that is
only damage, so a line that does not parse, a gap in `seq`, the byte-cap marker, a turn that
never finished, or a format this version does not know is refused with what to do instead.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.tracing import trace_events as ev
from atomic_agent.tracing.trace_paths import TraceError

# the first format whose traces carry what a rerun needs (section hashes, grammar hash, date, budgets)
FIRST_RERUNNABLE_FORMAT = 2


class UnreplayableTraceError(TraceError):
    """The trace cannot be re-run; `str()` says why and what to do."""


@attrs.frozen
class RecordedStep:
    turn_index: int
    step: int
    prompt: Mapping[str, Any] | None  # the step's prompt_captured event (None: the step never built one)
    completions: tuple[Mapping[str, Any], ...]  # llm_completion events, attempt order
    invocations: tuple[Mapping[str, Any], ...]  # tool_invocation events, batch order
    parse_retries: int = 0
    loops: tuple[Mapping[str, Any], ...] = ()


@attrs.frozen
class RecordedTurn:
    index: int
    user_text: str
    steps: tuple[RecordedStep, ...]
    finished: Mapping[str, Any]  # the turn_finished event


@attrs.frozen
class RecordedSession:
    session_id: str
    working_dir: str
    trace_format: int
    turns: tuple[RecordedTurn, ...]

    @property
    def steps(self) -> list[RecordedStep]:
        return [step for turn in self.turns for step in turn.steps]

    def first_prompt(self) -> Mapping[str, Any] | None:
        return next((s.prompt for s in self.steps if s.prompt is not None), None)

    def invoked_tools(self) -> set[str]:
        return {str(i.get("tool")) for s in self.steps for i in s.invocations}


def read_events_strictly(path: Path) -> list[dict[str, Any]]:
    """Every line of `path` as an event; any line that is not a JSON object is an error."""
    try:
        raw_lines = path.read_bytes().split(b"\n")
    except OSError as exc:
        raise UnreplayableTraceError(f"cannot read {path}: {exc.strerror or exc}") from exc
    events = []
    for number, raw in enumerate(raw_lines, start=1):
        if not raw.strip():
            continue
        try:
            event = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            event = None
        if not isinstance(event, dict):
            last = number == len(raw_lines) or (number == len(raw_lines) - 1 and not raw_lines[-1])
            damage = "cut off (the process stopped mid-write?)" if last else "damaged"
            raise UnreplayableTraceError(
                f"line {number} of {path} is not a JSON event: the trace is {damage}. A rerun needs the "
                "whole trace; `atomic-agent trace show` still reads what is left")
        events.append(event)
    return events


def parse_recorded_session(events: Sequence[Mapping[str, Any]], source: str) -> RecordedSession:
    """The session `events` recorded (`source` names the file in errors)."""
    if not events or events[0].get("type") != ev.SESSION_STARTED:
        raise UnreplayableTraceError(f"{source} does not begin with a session_started event, so it is not a whole "
                                     "session's trace (was it cut from the front?); only whole traces re-run")
    for expected, event in enumerate(events):
        if event.get("seq") != expected:
            raise UnreplayableTraceError(f"{source}: event {expected} has seq {event.get('seq')!r}, not {expected}: "
                                         "lines are missing or out of order, so the trace cannot be re-run")
        if event.get("type") == ev.TRACE_TRUNCATED:
            raise UnreplayableTraceError(f"{source} hit the per-session byte cap (tracing.maxBytesPerSession) and "
                                         "dropped later events; raise the cap and record the session again")
    started = events[0]
    fmt = started.get(ev.TRACE_FORMAT_KEY, 1)
    if not isinstance(fmt, int) or isinstance(fmt, bool) or fmt < 1:
        raise UnreplayableTraceError(f"{source}: traceFormat {fmt!r} is not a format number")
    if fmt > ev.TRACE_FORMAT:
        raise UnreplayableTraceError(f"{source} was written in trace format {fmt} by a newer atomic-agent; this one "
                                     f"reads formats up to {ev.TRACE_FORMAT}. Upgrade atomic-agent to re-run it")
    if fmt < FIRST_RERUNNABLE_FORMAT:
        raise UnreplayableTraceError(f"{source} is in trace format {fmt}, recorded before traces carried what a "
                                     "rerun compares (prompt section hashes, grammar hash, prompt date); record "
                                     "the session again to re-run it (`trace replay` without --rerun still checks "
                                     "its stable prefix)")
    turns = _turns(events, source)
    if not turns:
        raise UnreplayableTraceError(f"{source} records no finished turn, so there is nothing to re-run")
    return RecordedSession(session_id=str(started.get("sessionId", "")), working_dir=str(started.get("workingDir", "")),
                           trace_format=fmt, turns=tuple(turns))


def read_recorded_session(path: Path) -> RecordedSession:
    return parse_recorded_session(read_events_strictly(path), str(path))


@attrs.define
class _StepBuilder:
    turn_index: int
    step: int
    prompt: Mapping[str, Any] | None = None
    completions: list[Mapping[str, Any]] = attrs.field(factory=list)
    invocations: list[Mapping[str, Any]] = attrs.field(factory=list)
    parse_retries: int = 0
    loops: list[Mapping[str, Any]] = attrs.field(factory=list)

    def build(self) -> RecordedStep:
        return RecordedStep(self.turn_index, self.step, self.prompt, tuple(self.completions),
                            tuple(self.invocations), self.parse_retries, tuple(self.loops))


def _turns(events: Sequence[Mapping[str, Any]], source: str) -> list[RecordedTurn]:
    turns: list[RecordedTurn] = []
    open_turn: tuple[int, str] | None = None
    steps: dict[int, _StepBuilder] = {}
    for event in events[1:]:
        kind = event.get("type")
        turn_index, step = event.get("turnIndex"), event.get("step")
        if kind == ev.TURN_STARTED:
            if open_turn is not None:
                raise UnreplayableTraceError(f"{source}: turn {open_turn[0]} never finished before turn {turn_index} "
                                             "started (the process stopped mid-turn?); it cannot be re-run")
            open_turn, steps = (int(turn_index or 0), str(event.get("userText", ""))), {}
            continue
        if open_turn is None or turn_index != open_turn[0]:
            continue  # session-level events (compaction, usage) are not part of a turn's replay
        if kind == ev.TURN_FINISHED:
            turns.append(RecordedTurn(open_turn[0], open_turn[1], tuple(b.build() for b in steps.values()), event))
            open_turn = None
            continue
        if not isinstance(step, int):
            continue
        builder = steps.setdefault(step, _StepBuilder(open_turn[0], step))
        if kind == ev.PROMPT_CAPTURED:
            builder.prompt = event
        elif kind == ev.LLM_COMPLETION:
            builder.completions.append(event)
        elif kind == ev.TOOL_INVOCATION:
            builder.invocations.append(event)
        elif kind == ev.PARSE_RETRY:
            builder.parse_retries += 1
        elif kind == ev.LOOP_DETECTED:
            builder.loops.append(event)
    if open_turn is not None:
        raise UnreplayableTraceError(f"{source}: turn {open_turn[0]} never finished (the trace ends mid-turn); "
                                     "wait for the session to finish, or re-run an earlier, whole trace")
    return turns
