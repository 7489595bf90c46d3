"""A child process for the kill -9 tests: `atomic-agent telegram run`'s host with a scripted
provider, against the fake Bot API the parent runs.

    python -m tests.plugins.telegram.channel_child STATE_DIR [CRASH_POINT[:ARG]] [DELAY_S]

CRASH_POINT names a method the child kills itself in (SIGKILL, no cleanup) the first time
it is called (with ARG among its arguments, when given): `DeliveryStore.mark_attempting`
(the reply is recorded, nothing was sent), `DeliveryStore.open_reply` (the turn's admission
is committed, the update not confirmed), `DeliveryStore.mark_handled:steer` (a steer is
committed, its update not confirmed). DELAY_S slows every model answer (a turn then runs
long enough to be steered). Without a crash point the child runs until the parent kills it.
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

REPLIES = {"first question": "first answer", "second question": "second answer", "also this": "also answered"}


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
    provider = answering(REPLIES)
    provider.delay_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
    asyncio.run(run_foreground(boot_state(state), provider=provider))


if __name__ == "__main__":
    main()
