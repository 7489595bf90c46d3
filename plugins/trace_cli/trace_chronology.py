"""Turn a trace's events into a readable chronology: one headline per event, bodies on --raw."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from atomic_agent.api import trace_events as ev

from .step_attribution import StepPosition, attribute_steps

PREVIEW_CHARS = 100
_ENVELOPE = ("seq", "ts", "type", "sessionId")


@attrs.frozen
class ChronologyEntry:
    """One event as `trace show` prints it; `body` holds full texts, filled only in raw mode."""

    seq: int | None
    ts: str
    type: str
    position: StepPosition
    headline: str
    body: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class TraceSummary:
    """Counts for the header of `trace show`."""

    session_id: str
    event_count: int
    turns: int
    steps: int
    tool_invocations: int
    errors: int
    truncated: bool
    first_ts: str
    last_ts: str


def summarise_trace(events: Iterable[Mapping[str, Any]]) -> TraceSummary:
    items = list(events)
    types = [e.get("type") for e in items]
    session = next((str(e["sessionId"]) for e in items if e.get("sessionId")), "")
    return TraceSummary(
        session_id=session, event_count=len(items), turns=types.count(ev.TURN_STARTED),
        steps=types.count(ev.STEP_STARTED), tool_invocations=types.count(ev.TOOL_INVOCATION),
        errors=types.count(ev.ERROR), truncated=ev.TRACE_TRUNCATED in types,
        first_ts=str(items[0].get("ts", "")) if items else "", last_ts=str(items[-1].get("ts", "")) if items else "")


def build_chronology(events: Iterable[Mapping[str, Any]], *, raw: bool = False, step: int | None = None,
                     turn: int | None = None) -> list[ChronologyEntry]:
    """Entries for the events that pass the step/turn filter, in file order."""
    entries = []
    for position, event in attribute_steps(events):
        if not position.matches(step, turn):
            continue
        kind = str(event.get("type", "?"))
        headline, body = _describe(kind, event, raw)
        seq = event.get("seq")
        entries.append(ChronologyEntry(seq=seq if isinstance(seq, int) else None, ts=str(event.get("ts", "")),
                                       type=kind, position=position, headline=headline,
                                       body=tuple(body) if raw else ()))
    return entries


def render_chronology(entries: Iterable[ChronologyEntry]) -> str:
    lines = []
    for entry in entries:
        seq = "?" if entry.seq is None else str(entry.seq)
        clock = entry.ts[11:23] if len(entry.ts) >= 23 else entry.ts  # HH:MM:SS.mmm of the ISO stamp
        lines.append(f"#{seq:>4}  {clock:<12}  {entry.position.label():<9} {entry.type:<16} {entry.headline}".rstrip())
        for label, text in entry.body:
            lines.append(f"        {label}:")
            lines.extend(f"          {line}" for line in text.splitlines() or [""])
    return "\n".join(lines)


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """One line of at most `limit` characters; longer text is cut and its full length shown."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else f"{flat[:limit]}… ({len(text)} chars)"


def _describe(kind: str, e: Mapping[str, Any], raw: bool) -> tuple[str, list[tuple[str, str]]]:
    body: list[tuple[str, str]] = []
    if kind == ev.SESSION_STARTED:
        head = f"workingDir={e.get('workingDir')}"
        if e.get("metadata"):
            head += f" metadata={preview(e.get('metadata'))}"
    elif kind == ev.TURN_STARTED:
        head = f"turn {e.get('turnIndex')}: {preview(e.get('userText', ''))}"
        body.append(("userText", str(e.get("userText", ""))))
    elif kind == ev.TURN_FINISHED:
        head = f"turn {e.get('turnIndex')} {e.get('reason')} after {e.get('stepCount')} steps, {e.get('durationMs')} ms"
    elif kind == ev.STEP_STARTED:
        head = f"step {e.get('step')}"
    elif kind == ev.STEP_FINISHED:
        head = f"step {e.get('step')} done in {e.get('durationMs')} ms"
    elif kind == ev.PROMPT_CAPTURED:
        head, body = _prompt_headline(e), [("tail", str(e.get("tail", "")))]
    elif kind == ev.LLM_COMPLETION:
        head = (f"attempt {e.get('attempt')} stop={e.get('stopType')} {e.get('tokensPredicted')} tok "
                f"{e.get('durationMs')} ms cache {e.get('cacheN')}/{e.get('promptN')}: {preview(e.get('content', ''))}")
        if e.get("reasoningContent"):
            body.append(("reasoningContent", str(e.get("reasoningContent"))))
        body.append(("content", str(e.get("content", ""))))
    elif kind == ev.TOOL_INVOCATION:
        batch = f"[{e.get('batchIndex')}/{e.get('batchSize')}] " if "batchSize" in e else ""
        head = f"{batch}{e.get('tool')} {e.get('status')}: {preview(e.get('summary', ''))} args={preview(e.get('args'), 60)}"
        body.append(("args", json.dumps(e.get("args"), ensure_ascii=False, indent=2, default=str)))
        body.append(("summary", str(e.get("summary", ""))))
        if "details" in e:
            body.append(("details", json.dumps(e.get("details"), ensure_ascii=False, indent=2, default=str)))
    elif kind == ev.LOOP_DETECTED:
        head = f"{e.get('level')} by {e.get('detector')} on {e.get('tool')}"
    elif kind == ev.ERROR:
        head = f"{e.get('category')}: {preview(e.get('message', ''), 200)}"
        body.append(("message", str(e.get("message", ""))))
    elif kind == ev.TRACE_TRUNCATED:
        head = f"cap of {e.get('maxBytes')} bytes reached; later events were dropped"
    else:
        head = preview({k: v for k, v in e.items() if k not in _ENVELOPE})
    return head, body


def _prompt_headline(e: Mapping[str, Any]) -> str:
    tokens = raw_tokens if isinstance(raw_tokens := e.get("tokens"), dict) else {}
    digest = str(e.get("stablePrefixHash", ""))[:12]
    approx = "~" if tokens.get("estimated") else ""
    reused = "reused" if e.get("cacheReused") else "cold"
    return (f"prefix {digest} ({approx}{tokens.get('stablePrefix')} tok) tail {approx}{tokens.get('tail')} tok "
            f"slot {e.get('slotId')} cache {reused}: {preview(e.get('tail', ''), 60)}")
