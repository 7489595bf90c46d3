"""An `ask` callback that prompts on the terminal: y (once), s (this kind, this session),
a (this command shape, this session), n (deny).

It reads stdin whether or not it is a terminal, so a script can answer by piping lines; end
of input is a denial, so `</dev/null` (or a closed stdin) denies every prompt at once.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Callable
from typing import Any, TextIO

from atomic_agent.approval.approval_gate import LEVEL_NAMES, ApprovalAnswer, ApprovalRequest, offered_answers

# The text of a terminal approval prompt, made safe to show, and parsing the answer.
#
# The summary is untrusted (a model wrote it): escape sequences and control characters are
# neutralised so nothing can hide or overwrite part of the line, and a long summary keeps
# both its head and its tail with a marker saying how much is hidden in between.

HEAD_CHARS = 1500
TAIL_CHARS = 500
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b.")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def safe_display(text: str) -> str:
    text = _ANSI.sub("␛", text)
    text = text.replace("\r", "␍").replace("\t", "    ")
    text = _CONTROL.sub("�", text)
    if len(text) > HEAD_CHARS + TAIL_CHARS:
        hidden = len(text) - HEAD_CHARS - TAIL_CHARS
        text = f"{text[:HEAD_CHARS]} …[{hidden} chars not shown]… {text[-TAIL_CHARS:]}"
    return text


def choices(request: ApprovalRequest) -> list[tuple[str, str]]:
    """(key, meaning) pairs the prompt offers (the gate's table: [s] and [a] only where a
    grant is possible)."""
    return [(answer.key, answer.meaning) for answer in offered_answers(request, safe_display)]


def render_prompt(request: ApprovalRequest) -> str:
    offered = choices(request)
    level = f"{request.level} {LEVEL_NAMES.get(request.level, '')}".strip()
    lines = [f"approval needed · {request.label}",
             f"  {request.tool}: {safe_display(request.summary)}"]
    if request.note:
        lines.append(f"  note: {safe_display(request.note)}")
    lines.append("  " + "  ".join(f"[{key}] {meaning}" for key, meaning in offered))
    lines.append(f"  (y approves one call; the standing level is agent.approvalLevel = {level})")
    keys = "/".join(k for k, _ in offered[:-1]) + "/N"
    lines.append(f"answer [{keys}]: ")
    return "\n".join(lines)


def parse_answer(text: str, request: ApprovalRequest) -> ApprovalAnswer | None:
    """The answer for one typed line; None when it is not one of the offered keys."""
    key = text.strip().lower()
    if key in ("", "no"):
        key = "n"
    elif key == "yes":
        key = "y"
    for answer in offered_answers(request):
        if answer.key == key:
            return ApprovalAnswer(answer.kind)
    return None


MAX_TRIES = 3


def approval_event(request: ApprovalRequest) -> dict[str, Any]:
    return {"type": "approval_request", "sessionId": request.session_id, "tool": request.tool,
            "category": request.category, "label": request.label, "summary": request.summary,
            "commandShape": request.command_shape, "level": request.level,
            "canGrantCategory": request.can_grant_category, "canGrantShape": request.can_grant_shape,
            "binding": request.binding, "note": request.note}


def stdin_approver(emit: Callable[[dict[str, Any]], None] | None = None, stdin: TextIO | None = None,
                   out: TextIO | None = None, fixed: str | None = None) -> Callable[[ApprovalRequest], Any]:
    """Asks on the terminal; `fixed` ("once" or "never", a command's --approve) answers every
    request that way without asking."""
    if fixed is not None:
        if fixed not in ("once", "never"):
            raise ValueError(f"--approve takes once or never, not {fixed!r}")

        async def answer(_request: ApprovalRequest) -> ApprovalAnswer:
            return ApprovalAnswer.once() if fixed == "once" else ApprovalAnswer.deny()

        return answer
    lock = asyncio.Lock()  # one prompt at a time, even if two sessions ask at once

    async def ask(request: ApprovalRequest) -> ApprovalAnswer:
        if emit is not None:
            emit(approval_event(request))
        async with lock:
            for _ in range(MAX_TRIES):
                line = await asyncio.to_thread(_read_line, render_prompt(request), stdin or sys.stdin,
                                               out or sys.stderr)
                if line is None:
                    return ApprovalAnswer.deny()
                answer = parse_answer(line, request)
                if answer is not None:
                    return answer
            return ApprovalAnswer.deny()

    return ask


def _read_line(prompt: str, stdin: TextIO, out: TextIO) -> str | None:
    print(prompt, end="", file=out, flush=True)
    try:
        line = stdin.readline()
    except (OSError, ValueError):
        line = ""
    if not line:
        print("(no answer: denied)", file=out, flush=True)
        return None
    return line
