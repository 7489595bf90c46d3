"""A child process for the kill -9 tests: `atomic-agent telegram run`'s host with a scripted
provider, against the fake Bot API the parent runs.

    python -m tests.plugins.telegram.channel_child STATE_DIR [CRASH_POINT[:ARG]] [DELAY_S]

CRASH_POINT names a method the child kills itself in (SIGKILL, no cleanup) the first time
it is called (with ARG among its arguments, when given): `DeliveryStore.mark_attempting`
(the reply is recorded, nothing was sent), `DeliveryStore.open_reply` (the turn's admission
is committed, the update not confirmed), `DeliveryStore.mark_handled:steer` (a steer is
committed, its update not confirmed), `DeliveryStore.chunk_sent` (on a fleet's database: the
reply's chunk was sent, its record still `attempting`). DELAY_S slows every model answer (a turn then runs
long enough to be steered). Without a crash point the child runs until the parent kills it.
With CHILD_GATE=1 in its environment the child has the harness's gate tools, and a message
`needs approval` makes the model call `test.ask` first (it replies once the call answered).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from atomic_agent.plugins.telegram import delivery_store
from atomic_agent.plugins.telegram.foreground_host import run_foreground

from .channel_harness import GateTools, answering, boot_state

REPLIES = {"first question": "first answer", "second question": "second answer", "also this": "also answered"}
GATED = "needs approval"


def gated_provider():  # noqa: ANN201 - a ScriptedProvider
    """`needs approval` -> call test.ask; once a tool result follows it -> reply with that result."""
    from atomic_agent.api import ScriptedProvider
    from atomic_agent.testing.scripted_provider import calls

    def answer(request):  # noqa: ANN001, ANN202
        after = request.prompt[request.prompt.rfind(GATED):]
        if GATED in request.prompt and "tool_result[" not in after:
            return calls(("test.ask", {}))
        said = "approved and done" if "approved and done" in after else "nothing done"
        return calls(("reply", {"text": f"after the approval: {said}"}))

    return ScriptedProvider([answer] * 64, default=calls(("reply", {"text": "done"})))


def crash_in(point: str) -> None:
    point, _, wanted = point.partition(":")
    cls_name, method = point.split(".")
    cls = getattr(delivery_store, cls_name)
    original = getattr(cls, method)

    def die(*args, **kwargs):  # noqa: ANN002, ANN003 - any signature
        if wanted and wanted not in args and wanted not in kwargs.values():
            return original(*args, **kwargs)
        print(f"child: SIGKILL in {point}", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(cls, method, die)


def main() -> None:
    state = Path(sys.argv[1])
    if len(sys.argv) > 2 and sys.argv[2]:
        crash_in(sys.argv[2])
    gated = os.environ.get("CHILD_GATE") == "1"
    provider = gated_provider() if gated else answering(REPLIES)
    provider.delay_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    asyncio.run(run_foreground(boot_state(state, GateTools() if gated else None), provider=provider))


if __name__ == "__main__":
    main()
