"""Process plumbing of the sidecar: protect the protocol's file descriptors, run the server.

fd 1 is moved aside for protocol lines and pointed at stderr, so a stray print, a C
library or a child process cannot corrupt the stream; fd 0 is moved aside likewise and
replaced by /dev/null, so a child process cannot swallow the host's requests.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path
from typing import Any

import attrs

from atomic_agent.plugins.sidecar.line_reader import FdLineSource
from atomic_agent.plugins.sidecar.protocol_writer import ProtocolWriter
from atomic_agent.plugins.sidecar.sidecar_config import SIDECAR_BLOCK
from atomic_agent.plugins.sidecar.sidecar_server import SidecarLimits, SidecarServer


def _take_protocol_fds() -> tuple[int, int]:
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_in, protocol_out


def without_tracing(boot_context: Any) -> Any:
    config = boot_context.config
    return attrs.evolve(boot_context, config=config.with_block("tracing", attrs.evolve(config.tracing, enabled=False)))


def limits_from(config: Any) -> SidecarLimits:
    block = config.blocks.get(SIDECAR_BLOCK)
    if block is None:
        return SidecarLimits()
    return SidecarLimits(max_line_bytes=block.max_line_bytes, approval_timeout_s=float(block.approval_timeout_s),
                         shutdown_grace_s=float(block.shutdown_grace_s))


def run_sidecar(boot_context: Any, *, tracing: bool, no_approval: bool, working_dir: Path) -> int:
    protocol_in, protocol_out = _take_protocol_fds()
    if not tracing:
        boot_context = without_tracing(boot_context)
    with open(protocol_out, "wb") as sink:
        asyncio.run(_serve(boot_context, ProtocolWriter(sink), protocol_in, no_approval, working_dir))
    return 0


async def _serve(boot_context: Any, writer: ProtocolWriter, fd: int, no_approval: bool, working_dir: Path) -> None:
    from atomic_agent.api import create_runtime

    limits = limits_from(boot_context.config)
    server = SidecarServer(writer, limits, working_dir)
    runtime = await create_runtime(boot_context=boot_context, ask=server.approvals.ask, serving=True,
                                   no_approval=no_approval)
    server.bind(runtime)
    await runtime.recover(resume=True)  # a restarted sidecar answers what it owes, in lane order
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, server.request_stop)
        except (NotImplementedError, RuntimeError):
            pass
    source = FdLineSource(fd, limits.max_line_bytes)
    source.start()
    print(f"atomic-agent sidecar: ready (protocol v1, state {boot_context.state_dir})", file=sys.stderr)
    await server.run(source)
