"""Ask the person at the terminal whether a gated call may run (y = once, n = deny)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any


def terminal_approver(emit: Any) -> Any:
    """An `ask` callback for the approval gate, or None when stdin is not a terminal."""
    if not sys.stdin.isatty():
        return None

    async def ask(request: Any) -> bool:
        emit({"type": "approval_request", "sessionId": request.session_id, "tool": request.tool,
              "category": request.category, "label": request.label, "summary": request.summary})
        prompt = f"allow {request.label} ({request.tool})? [y/N] "
        answer = await asyncio.to_thread(_read_answer, prompt)
        return answer in ("y", "yes")

    return ask


def _read_answer(prompt: str) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    return line.strip().lower()
