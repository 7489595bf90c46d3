"""`atomic-agent telegram run`: a runtime whose only host is the Telegram channel.

Approvals of other sessions have no one to ask (they are denied); the channel's own session
asks on the phone. SIGTERM/SIGINT drain the running turns gracefully (parked turns are
answered after the next start), then the channel stops and the runtime closes.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any


def refuse_if_held(state_dir: Path) -> None:
    """LockHeldError naming the holder when another process already polls this state dir's bot.

    Checked before the runtime is built: a second runtime would recover (and re-run) turns the
    first one owns, then sit there with a channel that can never come up."""
    from .instance_lock import LOCK_HELD, LockHeldError, holder_pid

    pid = holder_pid(state_dir)
    if pid is None:
        return
    who = f"pid {pid}" if pid > 0 else "a process whose pid the lock file does not name"
    stop = f"stop it (`kill {pid}`)" if pid > 0 else "stop it"
    raise LockHeldError(f"{LOCK_HELD}: another atomic-agent ({who}) already runs the Telegram channel of "
                        f"{state_dir}, and a bot can be polled by one process only; {stop} or pass another "
                        "--state-dir")


async def run_foreground(boot: Any, provider: Any = None) -> None:
    """Raises LockHeldError (before anything starts, or as soon as the channel meets the lock)
    when another process polls this bot."""
    from atomic_agent.api import create_runtime

    from .instance_lock import LOCK_HELD, LockHeldError

    refuse_if_held(Path(boot.state_dir))
    runtime = await create_runtime(boot_context=boot, provider=provider, serving=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runtime.recover(resume=True)  # what a previous process owed, in lane order
        status = runtime.channel_status().get("telegram", {})
        why = f"{status.get('reason') or ''} {status.get('error') or ''}"
        if LOCK_HELD in why:  # lost the race to another start: the channel can never come up
            refuse_if_held(Path(boot.state_dir))
            raise LockHeldError(why.strip())
        print(f"atomic-agent telegram: {status.get('state', 'not running')}"
              f"{' — ' + status['reason'] if status.get('reason') else ''}", file=sys.stderr)
        await stop.wait()
        await runtime.drain()
    finally:
        await runtime.close()
