"""A child process for the kill -9 tests: `atomic-agent telegram run`'s host with a scripted
provider, against the fake Bot API the parent runs.

    python -m tests.plugins.telegram.channel_child STATE_DIR [CRASH_POINT]

CRASH_POINT names a method the child kills itself in (SIGKILL, no cleanup) the first time
it is called: `DeliveryStore.mark_attempting` (the reply is recorded, nothing was sent),
`DeliveryStore.open_reply` (the turn's admission is committed, the update not confirmed).
Without one the child runs until the parent kills it.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

from atomic_agent.plugins.telegram import delivery_store
from atomic_agent.plugins.telegram.foreground_host import run_foreground

from .channel_harness import answering, boot_state

REPLIES = {"first question": "first answer", "second question": "second answer"}


def crash_in(point: str) -> None:
    cls_name, method = point.split(".")
    cls = getattr(delivery_store, cls_name)
    original = getattr(cls, method)

    def die(*args, **kwargs):  # noqa: ANN002, ANN003 - any signature
        print(f"child: SIGKILL in {point}", file=sys.stderr, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(cls, method, die)


def main() -> None:
    state = Path(sys.argv[1])
    if len(sys.argv) > 2:
        crash_in(sys.argv[2])
    asyncio.run(run_foreground(boot_state(state), provider=answering(REPLIES)))


if __name__ == "__main__":
    main()
