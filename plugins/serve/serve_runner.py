"""Run `serve`: one runtime and one uvicorn server on the same event loop.

On stop (SIGTERM / SIGINT / Ctrl+C) the server drains or parks (graceful_stop): it admits
nothing more (new requests: 503 `server_stopping`, and uvicorn stops accepting), each
running turn gets `serve.shutdownGraceS` to finish its step and is parked at the boundary
(interrupted: the next start answers it), queued turns stay queued, and every waiting
client gets its answer or a 503 `turn_parked` envelope (an error chunk and `[DONE]` on a
stream). uvicorn waits for those responses, then the runtime closes. A second signal
ends the grace period at once: the steps still in flight are abandoned and parked.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from atomic_agent.plugins.serve.server_context import ServeContext, ServeSettings

RESPONSE_MARGIN_S = 5  # after the turns' grace: time for the last envelopes to be written


def make_server(app: Any, host: str, port: int, ctx: ServeContext | None = None) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            if ctx is not None:
                try:  # a signal handler runs between two bytecodes: hand the drain to the loop
                    asyncio.get_running_loop().call_soon_threadsafe(ctx.hurry if self.should_exit else ctx.begin_stop)
                except RuntimeError:
                    pass  # no loop running: nothing was admitted, nothing to drain
            super().handle_exit(sig, frame)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            # uvicorn's own version re-raises the signal once serving stops, which would kill
            # the process before the runtime finished its durable writes
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            originals = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in originals.items():
                    signal.signal(sig, handler)

    grace = ctx.settings.shutdown_grace_s if ctx is not None else 0
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="off",
                            # uvicorn annotates int, but hands the value to asyncio.wait_for: seconds as a float
                            timeout_graceful_shutdown=grace + RESPONSE_MARGIN_S,  # type: ignore[arg-type]
                            access_log=False)
    return Server(config)


async def serve_forever(boot_context: Any, settings: ServeSettings, host: str, port: int, *, no_approval: bool,
                        sock: socket.socket | None = None, provider: Any = None) -> None:
    from atomic_agent.api import create_runtime
    from atomic_agent.plugins.serve.http_app import build_app

    ctx = ServeContext(settings)
    runtime = await create_runtime(boot_context=boot_context, ask=ctx.approvals.ask, provider=provider,
                                     serving=True, no_approval=no_approval)
    ctx.bind(runtime)
    await runtime.recover(resume=True)  # a restarted server answers what it owes, in lane order
    server = make_server(build_app(ctx), host, port, ctx)
    print(f"atomic-agent serve: http://{host}:{port} (model {settings.model_name!r}, approval level "
          f"{runtime.gate.level}{', bearer auth' if settings.api_key else ''})", file=sys.stderr)
    try:
        await server.serve(sockets=[sock] if sock is not None else None)
    finally:
        await ctx.shutdown()


def default_settings(config: Any, api_key: str | None, working_dir: Path, grants_allowed: bool,
                     operator_token: str | None = None) -> ServeSettings:
    from atomic_agent.plugins.serve.serve_config import SERVE_BLOCK

    block = config.blocks.get(SERVE_BLOCK)
    if block is None:
        return ServeSettings(working_dir=working_dir, api_key=api_key, grants_allowed=grants_allowed,
                             operator_token=operator_token)
    return ServeSettings(model_name=block.model_name, working_dir=working_dir,
                         approval_timeout_s=float(block.approval_timeout_s), grants_allowed=grants_allowed,
                         max_body_bytes=block.max_body_bytes, api_key=api_key,
                         shutdown_grace_s=float(block.shutdown_grace_s),
                         allowed_hosts=tuple(block.allowed_hosts), allowed_origins=tuple(block.allowed_origins),
                         workspace_roots=tuple(Path(os.path.expanduser(r)) for r in block.workspace_roots),
                         operator_token=operator_token)
