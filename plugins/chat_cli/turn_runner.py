"""Run turns from the CLI: one runtime per process. Ctrl+C cancels the turn in flight (the
user asked: it ends cancelled); SIGTERM is a graceful stop (the step in flight finishes
within the grace period, then the turn is parked — interrupted with a note — and the
message is answered by the next `serve`/`sidecar` start or the session's next turn)."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from atomic_agent.plugins.chat_cli.progress_printer import ProgressPrinter
from atomic_agent.plugins.chat_cli.stdin_lines import StdinLines
from atomic_agent.plugins.chat_cli.terminal_approver import terminal_approver

if TYPE_CHECKING:
    from atomic_agent.api import RuntimeView


def event_sink(json_out: bool) -> Callable[[dict[str, Any]], None]:
    if json_out:
        def emit(event: dict[str, Any]) -> None:
            sys.stdout.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
            sys.stdout.flush()
        return emit
    return ProgressPrinter()


async def open_runtime(state: Any, emit: Callable[[dict[str, Any]], None], no_approval: bool,
                       lines: StdinLines) -> Any:
    from atomic_agent.api import create_runtime

    runtime = await create_runtime(boot_context=state.require(), ask=terminal_approver(emit, lines),
                                   no_approval=no_approval)
    # settle what a dead process left (interrupted turns, undelivered steers); a one-shot
    # command does not run other people's queued turns — a long-running host resumes those
    await runtime.recover(resume=False)
    return runtime


async def run_one_turn(runtime: RuntimeView, text: str, session_id: str | None, emit: Callable[[dict[str, Any]], None],
                       working_dir: Path, tool_choice: str | None = None) -> Any:
    from atomic_agent.api import text_problem

    problem = text_problem(text)  # a non-UTF-8 argument (surrogateescape) is refused before anything is written
    if problem is not None:
        raise problem
    cancelled = asyncio.Event()
    loop = asyncio.get_running_loop()
    draining: list[asyncio.Future[Any]] = []

    def graceful_stop() -> None:
        if not draining:
            draining.append(asyncio.ensure_future(runtime.drain()))

    handlers = {signal.SIGINT: cancelled.set, signal.SIGTERM: graceful_stop}
    for sig, handler in handlers.items():
        try:
            loop.add_signal_handler(sig, handler)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        result = await runtime.run_turn(text, session_id=session_id, on_event=emit, working_dir=working_dir,
                                        cancelled=cancelled, tool_choice=tool_choice)
        hand_back(runtime, result)
        return result
    finally:
        if draining:
            await asyncio.gather(*draining, return_exceptions=True)
        for sig in handlers:
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass


def hand_back(runtime: RuntimeView, result: Any) -> None:
    """A one-shot command re-sends nothing: show each steer the turn handed back, then
    dismiss its stored copy (the user has seen it; it must not come back as a turn)."""
    for text, steer_id in result.handed_back():
        print(f"atomic-agent: a steer arrived too late for this turn and was not used: {text}", file=sys.stderr)
        if steer_id:
            runtime.dismiss_steer(steer_id)


def exit_code(result: Any) -> int:
    return {"done": 0, "cancelled": 130, "interrupted": 143}.get(result.status, 1)


def kept_message_note(result: Any) -> str | None:
    """What a failed or parked turn left for the user: where the message is and what answers it."""
    sid = result.session_id
    if result.status == "interrupted":
        return (f"stopped before the turn finished; your message is kept in session {sid} and is answered by the "
                f"next `atomic-agent serve`/`sidecar` start, or continue now with `atomic-agent run --session {sid} "
                "...`")
    if result.status == "failed":
        return (f"the turn failed [{result.category}]; your message is kept in session {sid} with a note of why — "
                f"`atomic-agent run --session {sid} ...` picks it up again")
    return None
