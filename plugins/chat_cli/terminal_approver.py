"""Ask the person at the terminal whether a gated call may run.

Answers: y = this call once, s = this kind for the rest of the session, a = this command
(binary) for the rest of the session, n = deny. The prompt names the category label so the
person sees why it fired. Piped stdin answers too; end of input denies.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atomic_agent.plugins.chat_cli.stdin_lines import StdinLines


def terminal_approver(emit: Any, lines: StdinLines) -> Any:
    """An `ask` callback for the approval gate that prompts on stderr and reads stdin
    through `lines`, the command's one reader of it.

    The `approval_request` event goes to NDJSON hosts (`--json`); the human progress
    printer gets none, because the prompt itself shows the request with its summary made
    safe to display, and printing the raw summary too would undo that.
    """
    from atomic_agent.api import stdin_approver
    from atomic_agent.plugins.chat_cli.progress_printer import ProgressPrinter

    return stdin_approver(None if isinstance(emit, ProgressPrinter) else emit, read_line=lines.next_line)
