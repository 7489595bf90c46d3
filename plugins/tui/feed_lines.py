"""What one runtime turn event means to the person watching: a line of the step feed.

A pure mapping from the runtime's event dicts (the same ones `run`, the sidecar and serve
forward) to `FeedLine`s, so the rendering is testable without a terminal and an event this
module does not know is ignored instead of breaking the view. Text the model wrote (args,
summaries, steers) is made safe to show first: control and escape sequences cannot move
the cursor or restyle the screen.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

PREVIEW_CHARS = 160
UNSAFE_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]|\x1b")


def safe_text(text: str) -> str:
    """One line, control characters shown as visible marks (a model wrote it)."""
    return UNSAFE_CHARS.sub("�", " ".join(text.split()))


def preview(value: object, limit: int = PREVIEW_CHARS) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    text = safe_text(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_lines(text: str) -> str:
    """Several lines kept apart and aligned (a diffstat), control characters shown as marks."""
    return "\n".join(UNSAFE_CHARS.sub("\ufffd", line.expandtabs(4)).rstrip() for line in text.splitlines())


@attrs.frozen
class FeedLine:
    """`kind` picks the style: step, tool, result, error, notice, steer, reasoning."""

    kind: str
    text: str
    indent: int = 0


def feed_line(event: dict[str, Any]) -> FeedLine | None:
    """The line an event adds to the feed, or None (deltas, the reply and unknown events)."""
    kind = event.get("type")
    if kind == "step_started":
        return FeedLine("step", f"step {int(event.get('step', 0)) + 1}")
    if kind == "tool_call_started":
        where = ""
        if "batchSize" in event:  # one inference asked for several calls: number them within the batch
            where = f" [{int(event['batchIndex']) + 1}/{event['batchSize']}]"
        return FeedLine("tool", f"→ {safe_text(str(event.get('tool', '?')))}{where} {preview(event.get('args', {}))}",
                        1)
    if kind == "tool_call_result":
        status = str(event.get("status", "?"))
        mark = "vetoed" if event.get("vetoed") else status
        style = "result" if status == "ok" else "error"
        where = f" [{int(event['batchIndex']) + 1}/{event['batchSize']}]" if "batchSize" in event else ""
        return FeedLine(style, f"{mark}{where}: {preview(event.get('summary', ''))}", 2)
    if kind == "parse_retry":
        return FeedLine("notice", f"the answer did not parse; asking once more ({preview(event.get('reason', ''), 80)})",
                        1)
    if kind == "loop_detected":
        return FeedLine("notice", f"loop {event.get('level')} ({event.get('detector')}) on {event.get('tool')}", 1)
    if kind == "approval_request":
        return FeedLine("notice", f"approval asked: {event.get('label')} — {preview(event.get('summary', ''), 80)}", 1)
    if kind == "step_error":
        return FeedLine("error", f"[{event.get('category')}] {preview(event.get('message', ''))}", 1)
    if kind == "loop_failed":
        return FeedLine("error", f"the turn failed [{event.get('category')}]: {preview(event.get('message', ''))}", 1)
    if kind == "llm_unavailable":
        return FeedLine("error", f"model server unavailable ({event.get('mode')}): {preview(event.get('hint', ''))}", 1)
    if kind == "steer_applied":
        return FeedLine("steer", f"steer applied at step {int(event.get('stepIndex', 0)) + 1}: "
                                 f"{preview(event.get('text', ''), 100)}")
    if kind == "steer_undelivered":
        return FeedLine("steer", f"steer came too late for this turn; it is sent next: "
                                 f"{preview(event.get('text', ''), 100)}")
    if kind == "turn_queued":
        return FeedLine("notice", f"waiting behind {event.get('position', '?')} turn(s) on this session")
    if kind == "turn_finished":
        ms = float(event.get("durationMs") or 0)
        return FeedLine("step", f"turn {event.get('status')} ({event.get('reason')}) after {event.get('steps')} "
                                f"step(s), {ms / 1000:.1f} s")
    return None
