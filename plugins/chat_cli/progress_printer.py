"""Render agent events for a person on stderr (steps, tool calls, results, failures)."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO


def _preview(value: object, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ProgressPrinter:
    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr

    def __call__(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        line = None
        if kind == "step_started":
            line = f"· step {event['step'] + 1}"
        elif kind == "tool_call_started":
            where = f" [{event['batchIndex'] + 1}/{event['batchSize']}]" if "batchSize" in event else ""
            line = f"  → {event['tool']}{where} {_preview(event.get('args', {}))}"
        elif kind == "tool_call_result":
            line = f"    {event['status']}: {_preview(event.get('summary', ''))}"
        elif kind == "parse_retry":
            line = f"  ! the answer did not parse, asking once more ({_preview(event.get('reason', ''), 80)})"
        elif kind == "loop_detected":
            line = f"  ! loop {event.get('level')} ({event.get('detector')}) on {event.get('tool')}"
        elif kind == "approval_request":
            line = f"  ? approval needed: {event.get('label')} — {event.get('summary')}"
        elif kind == "step_error":
            line = f"  ! [{event['category']}] {event.get('message', '')}"
        elif kind == "llm_unavailable":
            line = f"  ! model server unavailable ({event.get('mode')}): {event.get('hint')}"
        elif kind == "turn_notice":  # a plugin's word to the person (a worktree's diffstat): its lines as written
            line = "\n".join(f"  {text_line}" for text_line in str(event.get("text", "")).splitlines())
        elif kind == "turn_finished":
            line = f"· turn {event['status']} ({event['reason']}) after {event['steps']} step(s), {event['durationMs']:.0f} ms"
        if line is not None:
            print(line, file=self.stream, flush=True)
