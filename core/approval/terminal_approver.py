"""An `ask` callback that prompts on the terminal: y (once), s (this kind, this session),
a (this command shape, this session), n (deny).

It reads stdin whether or not it is a terminal, so a script can answer by piping lines; end
of input is a denial, so `</dev/null` (or a closed stdin) denies every prompt at once.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any, TextIO

from atomic_agent.approval.approval_answer import ApprovalAnswer
from atomic_agent.approval.approval_gate import ApprovalRequest
from atomic_agent.approval.prompt_text import parse_answer, render_prompt

MAX_TRIES = 3


def approval_event(request: ApprovalRequest) -> dict[str, Any]:
    return {"type": "approval_request", "sessionId": request.session_id, "tool": request.tool,
            "category": request.category, "label": request.label, "summary": request.summary,
            "commandShape": request.command_shape, "level": request.level,
            "canGrantCategory": request.can_grant_category, "canGrantShape": request.can_grant_shape,
            "binding": request.binding, "note": request.note}


def stdin_approver(emit: Callable[[dict[str, Any]], None] | None = None, stdin: TextIO | None = None,
                   out: TextIO | None = None) -> Callable[[ApprovalRequest], Any]:
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
