"""An `ask` callback that prompts on the terminal: y (once), s (this kind, this session),
a (this command shape, this session), n (deny).

It reads stdin whether or not it is a terminal, so a script can answer by piping lines; end
of input is a denial, so `</dev/null` (or a closed stdin) denies every prompt at once.

It shows `ask_user` questions too: the prompt, why the model asks, the options with their
ids; the person types an option id (or its number), or free text where the question takes
it. The answer goes back to the gate, which commits it to the durable record (an answer
given meanwhile on another surface wins). End of input, or no valid answer in three tries,
withdraws the question (cancelled, with why), so a piped run does not wait for it.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TextIO

from atomic_agent.approval.approval_answers import ApprovalAnswer, ApprovalRequest, offered_answers
from atomic_agent.approval.approval_gate import LEVEL_NAMES

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
    event: dict[str, Any] = {
        "type": "approval_request", "sessionId": request.session_id, "tool": request.tool,
        "category": request.category, "label": request.label, "summary": request.summary,
        "commandShape": request.command_shape, "level": request.level,
        "canGrantCategory": request.can_grant_category, "canGrantShape": request.can_grant_shape,
        "binding": request.binding, "note": request.note}
    if request.approval_id is not None:
        event["approvalId"] = request.approval_id
    if request.question is not None:
        event.update(kind="question", question=request.question)  # as serve's event stream marks one
    return event


def _options(question: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(str(o.get("id", "")), str(o.get("label", o.get("id", "")))) for o in question.get("options") or []]


def render_question(request: ApprovalRequest) -> str:
    question = request.question or {}
    options = _options(question)
    lines = [f"question from the agent · {safe_display(str(question.get('reason', 'question')))}",
             f"  {safe_display(str(question.get('prompt', request.summary)))}"]
    if question.get("evidence"):
        lines.append(f"  why it asks: {safe_display(str(question['evidence']))}")
    lines += [f"  [{n}] {safe_display(oid)}: {safe_display(label)}" for n, (oid, label) in enumerate(options, 1)]
    free = bool(question.get("allowFreeText"))
    if free:
        lines.append("  or type your own answer" if options else "  type your answer")
    if request.approval_id:
        lines.append(f"  (also answerable elsewhere: atomic-agent approvals answer {request.approval_id} ...)")
    hint = "option id or number" + (", or text" if free else "") if options else "text"
    lines.append(f"answer ({hint}): ")
    return "\n".join(lines)


def parse_question_answer(text: str, request: ApprovalRequest) -> dict[str, str] | None:
    """`{"option": id}` or `{"text": ...}` for one typed line; None when it answers nothing."""
    question = request.question or {}
    typed = text.strip()
    if not typed:
        return None
    options = _options(question)
    ids = [oid for oid, _ in options]
    if typed in ids:
        return {"option": typed}
    folded = [oid for oid in ids if oid.lower() == typed.lower()]
    if len(folded) == 1:
        return {"option": folded[0]}
    if typed.isdigit() and 1 <= int(typed) <= len(ids):
        return {"option": ids[int(typed) - 1]}
    if question.get("allowFreeText"):
        return {"text": typed}
    return None


class TerminalPrompt:
    """The terminal as an approval host; it shows questions too (`shows_questions`)."""

    shows_questions = True

    def __init__(self, emit: Callable[[dict[str, Any]], None] | None, stdin: TextIO | None,
                 out: TextIO | None, read_line: Callable[[], Awaitable[bytes]] | None = None) -> None:
        self.emit = emit
        self.stdin = stdin
        self.out = out
        self.read_line = read_line  # the host's own reader of stdin, when it reads stdin too (the REPL)
        self._lock = asyncio.Lock()  # one prompt at a time, even if two sessions ask at once

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer | dict[str, str]:
        if self.emit is not None:
            self.emit(approval_event(request))
        async with self._lock:
            try:
                if request.question is not None:
                    return await self._ask_question(request)
                for _ in range(MAX_TRIES):
                    line = await self._line(render_prompt(request))
                    if line is None:
                        return ApprovalAnswer.deny()
                    answer = parse_answer(line, request)
                    if answer is not None:
                        return answer
                return ApprovalAnswer.deny()
            except asyncio.CancelledError:  # the prompt stays on screen: say it takes no answer now
                print("\n(this prompt is withdrawn: answered elsewhere, or the turn was stopped)",
                      file=self.out or sys.stderr, flush=True)
                raise

    async def _ask_question(self, request: ApprovalRequest) -> dict[str, str]:
        for _ in range(MAX_TRIES):
            line = await self._line(render_question(request), on_eof="(no answer: the question is withdrawn)")
            if line is None:
                return {"cancel": "no answer at the terminal (end of input)"}
            answer = parse_question_answer(line, request)
            if answer is not None:
                return answer
            print("  not one of the options" + ("" if (request.question or {}).get("allowFreeText")
                                                 else "; this question takes no free text"),
                  file=self.out or sys.stderr, flush=True)
        return {"cancel": f"no valid answer at the terminal in {MAX_TRIES} tries"}

    async def _line(self, prompt: str, on_eof: str = "(no answer: denied)") -> str | None:
        out = self.out or sys.stderr
        if self.read_line is None:
            return await asyncio.to_thread(_read_line, prompt, self.stdin or sys.stdin, out, on_eof)
        print(prompt, end="", file=out, flush=True)
        line = (await self.read_line()).decode("utf-8", "replace")
        if not line:
            print(on_eof, file=out, flush=True)
            return None
        return line


def stdin_approver(emit: Callable[[dict[str, Any]], None] | None = None, stdin: TextIO | None = None,
                   out: TextIO | None = None, fixed: str | None = None,
                   read_line: Callable[[], Awaitable[bytes]] | None = None) -> Callable[[ApprovalRequest], Any]:
    """Asks on the terminal; `fixed` ("once" or "never", a command's --approve) answers every
    request that way without asking (questions are then answered on the other surfaces).
    `read_line` (the next line of stdin, b"" at its end) is for a host that reads stdin
    itself: one reader shared by both, so a withdrawn prompt's pending read does not
    swallow the host's next line (a worker thread's blocked read cannot be stopped)."""
    if fixed is not None:
        if fixed not in ("once", "never"):
            raise ValueError(f"--approve takes once or never, not {fixed!r}")

        async def answer(_request: ApprovalRequest) -> ApprovalAnswer:
            return ApprovalAnswer.once() if fixed == "once" else ApprovalAnswer.deny()

        return answer
    return TerminalPrompt(emit, stdin, out, read_line).ask


def _read_line(prompt: str, stdin: TextIO, out: TextIO, on_eof: str = "(no answer: denied)") -> str | None:
    print(prompt, end="", file=out, flush=True)
    try:
        line = stdin.readline()
    except (OSError, ValueError):
        line = ""
    if not line:
        print(on_eof, file=out, flush=True)
        return None
    return line
