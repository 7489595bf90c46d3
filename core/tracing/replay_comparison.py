"""Compare a recorded session with its rerun, step by step: the prompt (stable-prefix sections by
their salted hashes, tail sections verbatim), the grammar, and the decisions (the calls made,
the results they got, parse retries, loop verdicts, how each turn ended).

Each step reports its first difference only, named by the `### ` section or the decision that
differs, so one template change reads as one named drift per step it touches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from atomic_agent.tracing.recorded_session import RecordedSession, RecordedStep, RecordedTurn
from atomic_agent.tracing.trace_events import prompt_sections

STABLE_PREFIX = "stable prefix"
TAIL = "tail"
GRAMMAR = "grammar"
DECISIONS = "decisions"
TURN_END = "turn end"
_EXCERPT = 160


@attrs.frozen
class Drift:
    """The first difference of one step (or of a turn's end)."""

    turn_index: int
    step: int | None
    part: str  # STABLE_PREFIX | TAIL | GRAMMAR | DECISIONS | TURN_END
    section: str  # the `### ` header, or what decision differs
    recorded: str = ""
    replayed: str = ""

    def describe(self) -> str:
        where = f"turn {self.turn_index}" + ("" if self.step is None else f" step {self.step}")
        text = f"{where}: {self.part} differs at {self.section!r}"
        if self.recorded or self.replayed:
            text += f" (recorded: {self.recorded!r}; now: {self.replayed!r})"
        return text

    def to_json(self) -> dict[str, Any]:
        return {"turnIndex": self.turn_index, "step": self.step, "part": self.part, "section": self.section,
                "recorded": self.recorded, "replayed": self.replayed}


def compare_sessions(recorded: RecordedSession, replayed: RecordedSession) -> list[Drift]:
    """Every step's first drift, in order (empty: the rerun was byte-identical and decided alike)."""
    drifts: list[Drift] = []
    replayed_turns = {t.index: t for t in replayed.turns}
    offset = replayed.turns[0].index - recorded.turns[0].index if replayed.turns else 0
    for turn in recorded.turns:
        again = replayed_turns.get(turn.index + offset)
        if again is None:
            drifts.append(Drift(turn.index, None, TURN_END, "turn", "finished", "never ran"))
            continue
        drifts.extend(_compare_turn(turn, again))
    return drifts


def _compare_turn(turn: RecordedTurn, again: RecordedTurn) -> list[Drift]:
    drifts = []
    for before, after in zip(turn.steps, again.steps, strict=False):
        drift = compare_step(before, after)
        if drift is not None:
            drifts.append(attrs.evolve(drift, turn_index=turn.index))
    if len(turn.steps) != len(again.steps):
        drifts.append(Drift(turn.index, None, DECISIONS, "step count", f"{len(turn.steps)} steps",
                            f"{len(again.steps)} steps"))
    ended = _turn_end(turn.finished), _turn_end(again.finished)
    if ended[0] != ended[1]:
        drifts.append(Drift(turn.index, None, TURN_END, "turn_finished", ended[0], ended[1]))
    return drifts


def compare_step(before: RecordedStep, after: RecordedStep) -> Drift | None:
    """The first thing that differs between a recorded step and its rerun, or None."""
    def drift(part: str, section: str, recorded: str = "", replayed: str = "") -> Drift:
        return Drift(before.turn_index, before.step, part, section, recorded, replayed)

    if before.prompt is not None and after.prompt is not None:
        found = _prompt_drift(before.prompt, after.prompt)
        if found is not None:
            return drift(*found)
    elif (before.prompt is None) != (after.prompt is None):
        return drift(TAIL, "prompt", _present(before.prompt), _present(after.prompt))
    calls = [_call(i) for i in before.invocations], [_call(i) for i in after.invocations]
    if calls[0] != calls[1]:
        return drift(DECISIONS, "tool calls", _clip(json_text(calls[0])), _clip(json_text(calls[1])))
    results = [_result(i) for i in before.invocations], [_result(i) for i in after.invocations]
    if results[0] != results[1]:
        return drift(DECISIONS, "tool results", _clip(json_text(results[0])), _clip(json_text(results[1])))
    if before.parse_retries != after.parse_retries or len(before.completions) != len(after.completions):
        return drift(DECISIONS, "parse retry", f"{len(before.completions)} completion(s)",
                     f"{len(after.completions)} completion(s)")
    loops = [_loop(e) for e in before.loops], [_loop(e) for e in after.loops]
    if loops[0] != loops[1]:
        return drift(DECISIONS, "loop detection", json_text(loops[0]), json_text(loops[1]))
    return None


def _prompt_drift(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    if before.get("stablePrefixHash") != after.get("stablePrefixHash"):
        return STABLE_PREFIX, *_first_prefix_difference(before.get("prefixSections") or [],
                                                        after.get("prefixSections") or [])
    tail = _first_section_difference(str(before.get("tail", "")), str(after.get("tail", "")))
    if tail is not None:
        return (TAIL, *tail)
    if before.get("grammarHash") != after.get("grammarHash"):
        return GRAMMAR, "grammar", str(before.get("grammarHash"))[:12], str(after.get("grammarHash"))[:12]
    return None


def _first_prefix_difference(before: Sequence[Sequence[str]], after: Sequence[Sequence[str]]) -> tuple[str, str, str]:
    """(section, recorded, now) of the first stable-prefix section whose header or hash differs."""
    for index in range(max(len(before), len(after))):
        old = tuple(before[index]) if index < len(before) else None
        new = tuple(after[index]) if index < len(after) else None
        if old == new:
            continue
        if old is not None and new is not None and old[0] == new[0]:
            return str(old[0]), "hash " + str(old[1])[:12], "hash " + str(new[1])[:12]
        name = str((new or old or ("?",))[0])
        return name, str(old[0]) if old else "(no section)", str(new[0]) if new else "(no section)"
    return "(framing)", "", ""  # same sections, different whole: only the join between them changed


def _first_section_difference(before: str, after: str) -> tuple[str, str, str] | None:
    if before == after:
        return None
    old, new = prompt_sections(before), prompt_sections(after)
    for index in range(max(len(old), len(new))):
        a = old[index] if index < len(old) else None
        b = new[index] if index < len(new) else None
        if a == b:
            continue
        if a is not None and b is not None and a[0] == b[0]:
            recorded, replayed = _first_line_difference(a[1], b[1])
            return a[0], recorded, replayed
        name = (b or a or ("?", ""))[0]
        return name, a[0] if a else "(no section)", b[0] if b else "(no section)"
    return None


def _first_line_difference(before: str, after: str) -> tuple[str, str]:
    old, new = before.splitlines(), after.splitlines()
    for index in range(max(len(old), len(new))):
        a = old[index] if index < len(old) else "(end)"
        b = new[index] if index < len(new) else "(end)"
        if a != b:
            return _clip(a), _clip(b)
    return _clip(repr(before[-40:])), _clip(repr(after[-40:]))  # a difference in line endings


def _call(event: Mapping[str, Any]) -> list[Any]:
    return [event.get("tool"), event.get("args")]


def _result(event: Mapping[str, Any]) -> list[Any]:
    return [event.get("tool"), event.get("status"), event.get("summary")]


def _loop(event: Mapping[str, Any]) -> list[Any]:
    return [event.get("level"), event.get("detector"), event.get("tool")]


def _turn_end(event: Mapping[str, Any]) -> str:
    return f"{event.get('status')}/{event.get('reason')} after {event.get('stepCount')} step(s)"


def _present(prompt: Mapping[str, Any] | None) -> str:
    return "no prompt" if prompt is None else "a prompt"


def json_text(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def _clip(text: str) -> str:
    return text if len(text) <= _EXCERPT else text[:_EXCERPT] + "…"
