"""`atomic-agent scheduler`: a host that runs due tasks until stopped, without serving HTTP.

It is the same host shape as `serve`, `sidecar` and `telegram run` (a serving runtime: the
plugins' ticks, the task scheduler among them, and the enabled channels), minus the server.
SIGTERM/SIGINT let the running turns finish (`runtime.drain`), then the runtime closes.
"""

from __future__ import annotations

import sys
from typing import Any

import typer

from atomic_agent.api import current_cli_state, fail


def scheduler_command(ctx: typer.Context) -> None:
    """Run due tasks until stopped (Ctrl+C or SIGTERM): the task scheduler without `serve`."""
    boot = current_cli_state(ctx).require()
    block = boot.config.block("tasks")
    if not block.enabled:
        fail("tasks are switched off (tasks.enabled = false); turn them on with "
             "`atomic-agent config set tasks.enabled true`")
    if not block.scheduler_enabled:
        fail("the task scheduler is switched off (tasks.schedulerEnabled = false); turn it on with "
             "`atomic-agent config set tasks.schedulerEnabled true`")
    import asyncio  # the event loop loads when the command runs, not when --help lists it

    asyncio.run(run_scheduler(boot, block))


async def run_scheduler(boot: Any, block: Any, provider: Any = None) -> None:
    import asyncio
    import signal

    from atomic_agent.api import create_runtime

    from . import TICK_NAME

    runtime = await create_runtime(boot_context=boot, provider=provider, serving=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await runtime.recover(resume=False)  # the scheduler answers no client: it owes no reply
        channels = ", ".join(f"{name} {status.get('state')}" for name, status in runtime.channel_status().items())
        print(f"atomic-agent scheduler: running due tasks every {block.scheduler_tick_ms / 1000:g} s "
              f"(state dir {boot.state_dir}; channels: {channels or 'none'}); stop with Ctrl+C",
              file=sys.stderr, flush=True)
        # the first pass now, not one tick interval after start: a task due while no host ran
        await runtime.run_tick(TICK_NAME)
        await stop.wait()
        print("atomic-agent scheduler: stopping (running turns finish first)", file=sys.stderr, flush=True)
        await runtime.drain()
    finally:
        await runtime.close()
