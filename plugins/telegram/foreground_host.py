"""`atomic-agent telegram run`: a runtime whose only host is the Telegram channel.

Approvals of other sessions have no one to ask (they are denied); the channel's own session
asks on the phone. SIGTERM/SIGINT drain the running turns gracefully (parked turns are
answered after the next start), then the channel stops and the runtime closes.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any


async def run_foreground(boot: Any, provider: Any = None) -> None:
    from atomic_agent.api import create_runtime

    runtime = await create_runtime(boot_context=boot, provider=provider, serving=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runtime.recover(resume=True)  # what a previous process owed, in lane order
        status = runtime.channel_status().get("telegram", {})
        print(f"atomic-agent telegram: {status.get('state', 'not running')}"
              f"{' — ' + status['reason'] if status.get('reason') else ''}", file=sys.stderr)
        await stop.wait()
        await runtime.drain()
    finally:
        await runtime.close()
