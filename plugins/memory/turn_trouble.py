"""What went wrong in one turn, read from its transcript rows.

A turn is in trouble when it FAILED (it ended on a failure, or a tool call returned an error),
when the user's next message CORRECTED its reply ("no, that's wrong", "that didn't work"), or
when it took a DETOUR (the loop guard vetoed a call, the same call was retried, it ran out of
steps, or it took many tool calls for a short answer). A cancelled or interrupted turn says
nothing either way. Reflection distils a lesson from a turn in trouble; a corrected turn's
votes for the lessons it was shown turn into votes against them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable
from typing import Any

import attrs

FAILED, CORRECTED, DETOUR = "failed", "corrected", "detour"
TROUBLE_KINDS = (CORRECTED, FAILED, DETOUR)  # a turn with several signals is named by the first that applies
SUCCESS_REASONS = ("reply", "finish")
SILENT_REASONS = ("cancelled", "interrupted")  # no clean signal: the user stopped it
TERMINAL_TOOLS = frozenset({"reply", "finish"})
LOOP_DENIED_REASON = "tool-loop"  # the loop guard's veto marks its error result with this deniedReason
DEFAULT_DETOUR_CALLS = 6  # this many tool calls or more ...
SHORT_REPLY_CHARS = 300  # ... for a reply shorter than this is a detour
MAX_STEP_LINES = 12
MAX_TEXT = 200

# A correction opens with a refusal or names the reply as wrong; words, not a model, decide
# (reflection may still abstain from a lesson when the correction carries none).
_OPENERS = re.compile(r"^\W*(no(?!\s+(problem|worries|thanks|thank|need|rush|hurry|matter|doubt)\b)|nope|nah|"
                      r"wrong|incorrect|not quite|not really|that'?s not|that is not|this is not|this isn'?t|"
                      r"that isn'?t|you misunderstood|i said|i meant|i asked)\b", re.IGNORECASE)
_PHRASES = re.compile(r"\b(that'?s wrong|that is wrong|is wrong|was wrong|are wrong|not what i (asked|meant|wanted|said)|"
                      r"(did ?n'?o?t|does ?n'?o?t|do ?n'?o?t|did not|does not) work|still (broken|fails|failing|wrong)|"
                      r"not (correct|right)|isn'?t (correct|right)|you forgot|you missed|try again|wrong (file|path|"
                      r"answer|one|command|directory|folder))\b", re.IGNORECASE)


def corrects(text: str) -> bool:
    """Does this user message correct the reply before it?"""
    flat = " ".join((text or "").split()).replace("\u2019", "'")
    return bool(flat) and bool(_OPENERS.search(flat) or _PHRASES.search(flat))


@attrs.frozen
class TurnTrouble:
    """One troubled turn: its kind, the signals seen (plain sentences), and what a lesson is
    distilled from (the request, the steps with their outcomes, the reply, the correction)."""

    kind: str
    session_id: str
    turn_index: int
    signals: tuple[str, ...]
    user_text: str
    reply_text: str
    steps: tuple[str, ...] = ()
    correction: str = ""

    @property
    def origin(self) -> str:
        """The turn's key ("session#turn"): a lesson distilled from it is written once."""
        return f"{self.session_id}#{self.turn_index}"


def _clip(text: object, limit: int = MAX_TEXT) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _call_key(entry: Any) -> str:
    return f"{entry.tool} {json.dumps(entry.args or {}, sort_keys=True, default=str)}"


def assess_turn(entries: Iterable[Any], session_id: str, turn_index: int, *, correction: str = "",
                detour_calls: int = DEFAULT_DETOUR_CALLS) -> TurnTrouble | None:
    """The trouble of turn `turn_index` in a session's transcript `entries`, or None for a
    clean turn. `correction` is the user's next message when it corrects this turn."""
    rows = [e for e in entries if e.turn_index == turn_index]
    if not rows:
        return None
    user = next((e.text for e in rows if e.kind == "user"), "")
    replies = [e.text for e in rows if e.kind == "assistant_reply"]
    finished = [e for e in rows if e.kind == "turn_finished"]
    reason = (finished[-1].reason or "") if finished else ""
    if reason in SILENT_REASONS:
        return None
    failed: list[str] = []
    detour: list[str] = []
    if finished and reason == "max_steps":
        detour.append("it ran out of steps before answering")
    elif finished and reason not in SUCCESS_REASONS:
        note = next((e.text for e in reversed(rows) if e.kind == "failure_note"), "")
        failed.append(f"the turn failed ({reason})" + (f": {_clip(note)}" if note else ""))
    calls = [e for e in rows if e.kind == "assistant_tool_call" and e.tool not in TERMINAL_TOOLS]
    steps: list[str] = []
    results = [e for e in rows if e.kind == "tool_result" and e.tool not in TERMINAL_TOOLS]
    by_place = {(r.step, r.batch_index): r for r in results}
    for i, call in enumerate(calls):
        result = by_place.get((call.step, call.batch_index)) or (results[i] if i < len(results) else None)
        outcome = f"{result.status}: {_clip(result.text, 120)}" if result is not None else "no result"
        keys = ", ".join(sorted((call.args or {}).keys()))
        steps.append(f"{call.tool}({keys}) -> {outcome}")
    for result in results:
        if result.status != "error":
            continue
        if (result.details or {}).get("deniedReason") == LOOP_DENIED_REASON:
            detour.append(f"the loop guard stopped a repeated {result.tool} call")
        else:
            failed.append(f"{result.tool} returned an error: {_clip(result.text)}")
    for key, n in Counter(_call_key(c) for c in calls).items():
        if n >= 2:
            detour.append(f"it called {key.split(' ', 1)[0]} with the same arguments {n} times")
    reply = replies[-1] if replies else ""
    if len(calls) >= detour_calls and len(reply) < SHORT_REPLY_CHARS:
        detour.append(f"it took {len(calls)} tool calls for a short answer")
    signals = ([f"the user's next message corrected the reply: {_clip(correction)}"] if correction else []) \
        + list(dict.fromkeys(failed)) + list(dict.fromkeys(detour))
    if not signals:
        return None
    kind = CORRECTED if correction else FAILED if failed else DETOUR
    return TurnTrouble(kind, session_id, turn_index, tuple(signals[:8]), _clip(user, 600), _clip(reply, 600),
                       tuple(steps[-MAX_STEP_LINES:]), _clip(correction, 600))


NO_VERDICT_REASONS = ("max_steps", *SILENT_REASONS)


def turn_verdict(reason: str) -> bool | None:
    """Whether what a turn was shown (lessons, notes, facts) helped (True), hurt (False) or
    says nothing (None): a reply or finish helped, a failure hurt, a cancelled, interrupted
    or out-of-steps turn carries no clean signal."""
    if reason in SUCCESS_REASONS:
        return True
    if reason in NO_VERDICT_REASONS:
        return None
    return False
